// Package codecs decodes state files with YAML and TOML libraries.
package codecs

import (
	"os"

	"github.com/BurntSushi/toml"
	"gopkg.in/yaml.v3"
)

type settings struct {
	Theme string `yaml:"theme" toml:"theme"`
}

func setThemeYAML(p, theme string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var s settings
	if err := yaml.Unmarshal(data, &s); err != nil {
		return err
	}
	s.Theme = theme
	out, _ := yaml.Marshal(s)
	return os.WriteFile(p, out, 0o644) // want `read-modify-write of p without a lock`
}

func setThemeTOML(p, theme string) error {
	var s settings
	if _, err := toml.DecodeFile(p, &s); err != nil {
		return err
	}
	s.Theme = theme
	f, err := os.Create(p) // want `read-modify-write of p without a lock`
	if err != nil {
		return err
	}
	defer f.Close()
	return toml.NewEncoder(f).Encode(s)
}
