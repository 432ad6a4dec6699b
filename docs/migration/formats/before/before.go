// Package before holds the "before" code of docs/MIGRATION.md's sections
// on other formats: read-modify-writes that statuslint reports.
package before

import (
	"os"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
	"k8s.io/client-go/tools/clientcmd"
)

// viper: the configuration is read at start-up (cobra.OnInitialize) and a
// command sets a value and writes the whole document back.

func initConfig(file string) {
	viper.SetConfigFile(file)
	_ = viper.ReadInConfig()
}

func setRegion(region string) error {
	viper.Set("region", region)
	return viper.WriteConfig() // want `read-modify-write of viper's configuration file without a lock: read at before.go:\d+ \(viper.ReadInConfig\) and kept, written back here \(viper.WriteConfig\).*use status.Transform on the file viper's ConfigFileUsed names, with viper's codec`
}

// A YAML round trip.

type hosts struct {
	Hosts map[string]string `yaml:"hosts"`
}

func addHost(path, name, url string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var h hosts
	if err := yaml.Unmarshal(data, &h); err != nil {
		return err
	}
	h.Hosts[name] = url
	out, err := yaml.Marshal(&h)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600) // want `read-modify-write of path without a lock: read at line \d+ \(os.ReadFile\).*use status.Transform with your YAML codec`
}

// A TOML round trip.

type release struct {
	Version int    `toml:"version"`
	Channel string `toml:"channel"`
}

func bumpVersion(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r release
	if err := toml.Unmarshal(data, &r); err != nil {
		return err
	}
	r.Version++
	out, err := toml.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600) // want `read-modify-write of path without a lock: read at line \d+ \(os.ReadFile\).*use status.Transform with your TOML codec`
}

// A kubeconfig: read through the loading rules, changed, and written back
// with ModifyConfig, whose lock covers only its own re-read.

func useContext(name string) error {
	po := clientcmd.NewDefaultPathOptions()
	cfg, err := po.GetStartingConfig()
	if err != nil {
		return err
	}
	cfg.CurrentContext = name
	return clientcmd.ModifyConfig(po, *cfg, true) // want `read-modify-write of the kubeconfig without a lock: read at line \d+ \(po.GetStartingConfig\), written back here \(clientcmd.ModifyConfig\).*use client-go.s lock`
}
