// Package appcmd has commands that load the configuration through the
// factory's loader, change it and save it, and commands that must not be
// reported.
package appcmd

import (
	"appconf"
	"cmdutil"
)

type setOptions struct {
	Config     appconf.Config
	Key, Value string
}

// NewCmdSet loads the configuration through the factory, and setRun
// changes and saves it: the configuration another process saved meanwhile
// is lost.
func NewCmdSet(f *cmdutil.Factory, key, value string) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	return setRun(&setOptions{Config: cfg, Key: key, Value: value}) // want `read-modify-write of filepath\.Join\(os\.Getenv\("HOME"\), "\.app", "config\.json"\) without a lock: read at line 20`
}

func setRun(opts *setOptions) error {
	opts.Config.Set(opts.Key, opts.Value)
	return opts.Config.Write()
}

// Inline: loaded, changed and saved in one function.
func SetInline(f *cmdutil.Factory, key, value string) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	cfg.Set(key, value)
	return cfg.Write() // want `read-modify-write of filepath\.Join\(os\.Getenv\("HOME"\), "\.app", "config\.json"\) without a lock: read at line 34`
}

// A configuration the command is given, not one it loaded: whoever loaded
// it is judged where it does.
func Save(cfg appconf.Config) error { return cfg.Write() }

// Writing a blank configuration loads nothing: not reported.
func Reset() error {
	var cfg appconf.Config = appconf.Blank{}
	return cfg.Write()
}

// A loader of bytes says nothing of what its function reads: not reported.
func Bump(f *cmdutil.Factory, cfg appconf.Config) error {
	if _, err := f.Version(); err != nil {
		return err
	}
	return Save(cfg)
}
