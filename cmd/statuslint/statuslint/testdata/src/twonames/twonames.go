// Package twonames reads one file under two names: the read uses the file
// a helper picks among those a package-level variable lists, the write
// ignores its path parameter and writes the variable.
package twonames

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

var cfgFile string // a flag's value: files separated by commas

type Config struct{ Current string }

// selectFile returns the file the user picks among those cfgFile lists,
// the first when there is one.
func selectFile(pick int) string {
	files := strings.Split(cfgFile, ",")
	if pick > 0 && pick < len(files) {
		return filepath.Join(filepath.Dir(files[pick]), filepath.Base(files[pick]))
	}
	return files[0]
}

func load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// writeConfig ignores path: it writes the file the flag names.
func writeConfig(path string, c *Config) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(cfgFile, data, 0o644)
}

func Switch(name string, pick int) error {
	path := selectFile(pick)
	c, err := load(path)
	if err != nil {
		return err
	}
	c.Current = name
	return writeConfig(path, c) // want `read-modify-write of path without a lock: read at line 50 \(load\), written back here \(writeConfig\)`
}

// backupFile names another file, next to the flag's.
func backupFile() string { return filepath.Join(filepath.Dir(cfgFile), "backup.json") }

// CONTROL: the backup is read and cfgFile written: two files, no cycle.
func Restore() error {
	c, err := load(backupFile())
	if err != nil {
		return err
	}
	return writeConfig("", c)
}

// fromEnv names a file of its own.
func fromEnv() string { return os.Getenv("CFG") }

// CONTROL: a helper whose result derives from something else.
func SwitchEnv(name string) error {
	c, err := load(fromEnv())
	if err != nil {
		return err
	}
	c.Current = name
	return writeConfig("", c)
}
