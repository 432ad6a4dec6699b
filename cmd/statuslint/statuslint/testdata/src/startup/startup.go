// Package startup holds the whole-program shapes of command-line programs:
// a document loaded at start-up and saved by a handler; one file under two
// names; a caller's decision on a first read with a callee that reads again
// and writes. Each has a CONTROL that must not be reported.
package startup

import (
	"encoding/json"
	"os"
	"syscall"
)

type Config struct {
	Current string            `json:"current"`
	Hosts   map[string]string `json:"hosts"`
}

func load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	return &c, json.Unmarshal(data, &c)
}

func save(path string, c *Config) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// Shape 1: loaded at start-up into a package-level variable (and into a
// long-lived object one holds), saved by a handler.

var configPath = os.Getenv("HOME") + "/.app/config.json"

var cfg *Config

type state struct{ conf *Config }

var app = &state{}

func initConfig() {
	c, err := load(configPath)
	if err != nil {
		c = &Config{Hosts: map[string]string{}}
	}
	cfg = c
	app.conf = c
}

func useHost(name string) error {
	cfg.Current = name
	return save(configPath, cfg) // want `read-modify-write of os.Getenv\("HOME"\)\+"/\.app/config\.json" without a lock: read at startup.go:\d+ \(load\) and kept, written back here \(save\)`
}

func addHost(name, url string) error {
	app.conf.Hosts[name] = url
	return save(configPath, app.conf) // want `read-modify-write of os.Getenv\("HOME"\)\+"/\.app/config\.json" without a lock: read at startup.go`
}

// CONTROL: a handler that writes a document it makes afresh.
func resetConfig() error {
	return save(configPath, &Config{Hosts: map[string]string{}})
}

// CONTROL: a handler that reads the document again under a lock, changes
// and saves it.
func useHostLocked(name string) error {
	lock, err := os.OpenFile(configPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	c, err := load(configPath)
	if err != nil {
		return err
	}
	c.Current = name
	return save(configPath, c)
}

// Shape 2: one file under two names. selectFile returns the path it also
// keeps in a package-level variable; writeConfig ignores its file and
// writes that variable.

var selected string

func selectFile() string {
	p := os.Getenv("APPCONFIG")
	if p == "" {
		p = "/etc/app/hosts.json"
	}
	selected = p
	return p
}

func writeConfig(_ string, c *Config) error { return save(selected, c) }

func renameHost(from, to string) error {
	c, err := load(selectFile())
	if err != nil {
		return err
	}
	c.Hosts[to] = c.Hosts[from]
	delete(c.Hosts, from)
	return writeConfig("", c) // want `read-modify-write of .* without a lock: read at line \d+ \(load\), written back here \(writeConfig\)`
}

var backup = "/var/backups/hosts.json"

func writeBackup(_ string, c *Config) error { return save(backup, c) }

// CONTROL: the same, writing another file (a backup).
func backupHosts() error {
	c, err := load(selectFile())
	if err != nil {
		return err
	}
	return writeBackup("", c)
}

// Shape 4: a decision on a first read, then a callee that reads the
// document again under a lock and writes it back.

func flock(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return f, syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}

func setCurrentLocked(path, name string) error {
	f, err := flock(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := load(path)
	if err != nil {
		return err
	}
	c.Current = name
	return save(path, c)
}

func switchIfUnset(path, name string) error {
	c, err := load(path)
	if err != nil {
		return err
	}
	if c.Current != "" {
		return nil
	}
	return setCurrentLocked(path, name) // want `read-modify-write of path without a lock: read at line \d+ \(load\) and decided on, then read again and written back here \(setCurrentLocked\)`
}

// CONTROL: no decision before the call.
func switchTo(path, name string) error {
	return setCurrentLocked(path, name)
}

// Shape 1 across packages: loaded by an unexported function of this
// package, saved by a command of package startupcmd.

var SettingsPath = os.Getenv("HOME") + "/.app/settings.json"

var Settings *Config

func loadSettings() {
	Settings, _ = load(SettingsPath)
}

func Save(path string, c *Config) error { return save(path, c) }
