// Package koanfconf loads a YAML file with koanf and writes it back.
package koanfconf

import (
	"os"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

func setMode(p, mode string) error {
	k := koanf.New(".")
	if err := k.Load(file.Provider(p), yaml.Parser()); err != nil {
		return err
	}
	if err := k.Set("mode", mode); err != nil {
		return err
	}
	out, err := k.Marshal(yaml.Parser())
	if err != nil {
		return err
	}
	return os.WriteFile(p, out, 0o644) // want `read-modify-write of p without a lock`
}
