// Package viperconf changes a configuration file through viper, with its
// package-level instance and with an instance of its own: ReadInConfig,
// Set, WriteConfig.
package viperconf

import "github.com/spf13/viper"

func setTokenGlobal(p, token string) error {
	viper.SetConfigFile(p)
	if err := viper.ReadInConfig(); err != nil {
		return err
	}
	viper.Set("token", token)
	return viper.WriteConfig() // want `read-modify-write of .* without a lock`
}

func setTokenInstance(p, token string) error {
	v := viper.New()
	v.SetConfigFile(p)
	if err := v.ReadInConfig(); err != nil {
		return err
	}
	v.Set("token", token)
	return v.WriteConfig() // want `read-modify-write of .* without a lock`
}

// A fresh configuration, written without reading: not reported.
func initConfig(p string) error {
	v := viper.New()
	v.Set("token", "")
	return v.WriteConfigAs(p)
}
