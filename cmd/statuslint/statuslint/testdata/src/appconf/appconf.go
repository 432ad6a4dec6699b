// Package appconf is an application's configuration: an interface, and an
// implementation loaded from its file once and saved back by Write.
package appconf

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agentstate/core/fs"
)

// Config is what commands see of the configuration.
type Config interface {
	Get(key string) string
	Set(key, value string)
	Write() error
}

func path() string { return filepath.Join(os.Getenv("HOME"), ".app", "config.json") }

type fileConfig struct{ values map[string]string } // want fileConfig:`Write: writes path/filepath.Join`

// New loads the configuration.
func New() (Config, error) { // want New:`result 0: decoded`
	data, err := os.ReadFile(path())
	if err != nil {
		return nil, err
	}
	c := &fileConfig{}
	return c, json.Unmarshal(data, &c.values)
}

func (c *fileConfig) Get(key string) string { return c.values[key] }
func (c *fileConfig) Set(key, value string) { c.values[key] = value }

func (c *fileConfig) Write() error {
	data, err := json.Marshal(c.values)
	if err != nil {
		return err
	}
	return fs.WriteAtomic(path(), data, 0o600)
}

// A blank configuration written by tests does nothing with files.
type Blank struct{}

func (Blank) Get(string) string  { return "" }
func (Blank) Set(string, string) {}
func (Blank) Write() error       { return nil }

// Version reads a value, not a Config: a loader of another signature.
func Version() ([]byte, error) { return os.ReadFile(path()) }
