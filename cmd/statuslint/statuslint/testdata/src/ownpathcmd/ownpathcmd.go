// Package ownpathcmd changes a configuration that saves itself to the file
// it was loaded from.
package ownpathcmd

import (
	"encoding/json"
	"os"

	"ownpath"
)

func SetAlias(dir, name, expansion string) error {
	cfg, err := ownpath.Load(dir)
	if err != nil {
		return err
	}
	cfg.Aliases[name] = expansion
	return cfg.Save() // want `read-modify-write of filepath\.Join\(dir, "config\.json"\) without a lock: read at line 13`
}

// Exported elsewhere: a copy written to another file is not the file read.
func Export(dir, to string) error {
	cfg, err := ownpath.Load(dir)
	if err != nil {
		return err
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}

// A configuration made here, not loaded: saving it is no read-modify-write.
func Fresh(cfg *ownpath.File) error {
	cfg.Aliases = map[string]string{}
	return cfg.Save()
}
