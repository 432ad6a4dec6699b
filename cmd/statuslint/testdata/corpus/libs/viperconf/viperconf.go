// Package viperconf changes a configuration file through viper, with its
// package-level instance and with an instance of its own: ReadInConfig,
// Set, WriteConfig.
package viperconf

import (
	"bytes"
	"io"
	"os"

	"github.com/BurntSushi/toml"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"
)

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

// The shape of a CLI's configure command: an instance read by search path
// and name, kept in a struct field, changed, and saved by a persister
// behind an interface under a spelled-out path.

type persister interface {
	save(v *viper.Viper, name string) error
}

type filePersister struct{ dir string }

func (p filePersister) save(v *viper.Viper, name string) error {
	v.SetConfigType("json")
	return v.WriteConfigAs(p.dir + "/" + name + ".json")
}

type memPersister struct{}

func (memPersister) save(*viper.Viper, string) error { return nil }

type configuration struct {
	user      *viper.Viper
	persister persister
}

func (c configuration) save(name string) error { return c.persister.save(c.user, name) }

var userConfig = viper.New()

func configure(dir, token string) error {
	c := configuration{persister: filePersister{dir: dir}}
	userConfig.AddConfigPath(dir)
	userConfig.SetConfigName("user")
	_ = userConfig.ReadInConfig()
	c.user = userConfig
	return runConfigure(c, token) // want `read-modify-write of the configuration file viper read into viperconf.userConfig without a lock: read at line 74`
}

// runConfigure changes and saves the configuration it is given: the
// read-modify-write is its caller's, which read it.
func runConfigure(c configuration, token string) error {
	c.user.Set("token", token)
	return c.save("user")
}

// The same without the read: a fresh configuration saved through the
// persister. Not reported.
func configureFresh(dir, token string) error {
	c := configuration{user: viper.New(), persister: filePersister{dir: dir}}
	c.user.Set("token", token)
	return c.save("user")
}

// The instance stands for the document it read, so a copy saved to
// another file is reported too (a documented false positive).
func exportConfig(p, dst string) error {
	v := viper.New()
	v.SetConfigFile(p)
	if err := v.ReadInConfig(); err != nil {
		return err
	}
	return v.WriteConfigAs(dst) // want `read-modify-write of .* without a lock`
}

// The global instance written under a spelled-out path.
func setTokenGlobalAs(p, token string) error {
	viper.AddConfigPath(p)
	_ = viper.ReadInConfig()
	viper.Set("token", token)
	return viper.WriteConfigAs(p + "/config.json") // want `read-modify-write of .* without a lock`
}

// The shape of a cobra and viper CLI: the configuration read once at
// start-up (cobra.OnInitialize), by viper's own instance or by one kept in
// a package-level variable; a command that only sets a value and writes
// back the whole document read at start-up.

var appViper = viper.New()

func loadAtStartup(home string) {
	viper.AddConfigPath(home)
	_ = viper.ReadInConfig()
	appViper.AddConfigPath(home)
	_ = appViper.ReadInConfig()
}

func setRegion(region string) error {
	viper.Set("region", region)
	return viper.WriteConfig() // want `read-modify-write of viper's configuration file without a lock: read at viperconf.go:\d+ \(viper.ReadInConfig\) and kept, written back here \(viper.WriteConfig\).*use status.Transform on the file viper's ConfigFileUsed names`
}

func setProfile(profile string) error {
	appViper.Set("profile", profile)
	return appViper.WriteConfig() // want `read-modify-write of the configuration file viper read into viperconf.appViper without a lock: read at viperconf.go`
}

// CONTROL: an instance of the command's own, read nowhere, written as a
// fresh document.
func writeDefaults(p string) error {
	v := viper.New()
	v.Set("region", "eu-west-1")
	return v.WriteConfigAs(p)
}

// The same with the document encoded by the program and written to a file
// it opens through a function variable (a writer that tests replace).

var cfgWriter = defaultWriter

func defaultWriter() (io.WriteCloser, error) { return os.Create(viper.GetString("config")) }

func writeSettings() error {
	f, err := cfgWriter()
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := yaml.Marshal(viper.AllSettings())
	if err != nil {
		return err
	}
	_, err = f.Write(b) // want `read-modify-write of viper's configuration file without a lock: read at viperconf.go:\d+ \(viper.ReadInConfig\) and kept, written back here \(f.Write\)`
	return err
}

// CONTROL: a document the program makes, written the same way.
func writeFresh() error {
	f, err := cfgWriter()
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := yaml.Marshal(map[string]string{"region": "eu-west-1"})
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return err
}

// A default configuration written when viper finds none: not reported.
func loadOrCreate(dir string) *viper.Viper {
	v := viper.New()
	v.AddConfigPath(dir)
	v.SetConfigName("app")
	if _, ok := v.ReadInConfig().(viper.ConfigFileNotFoundError); ok {
		v.Set("region", "eu-west-1")
		_ = v.WriteConfigAs(dir + "/app.toml")
	}
	return v
}

// The caller of a loader that writes a default when there is none changes
// the document the loader read and writes it back: reported (the loader's
// refill is not, above).
func setEntry(dir, key, value string) {
	v := loadOrCreate(dir)
	v.Set(key, value)
	_ = v.WriteConfig() // want `read-modify-write of the configuration file viper read without a lock: read at line 197 \(loadOrCreate\), written back here \(v.WriteConfig\)`
}

// A Set-only write through a helper that writes the instance it is given
// and then re-reads the file into viper's own instance: what the re-read
// brings in is what was just written, so the write is still a write-back
// of the document loaded at start-up (loadAtStartup).
func saveAndReload(v *viper.Viper) error {
	file := viper.ConfigFileUsed()
	v.SetConfigFile(file)
	if err := v.WriteConfig(); err != nil {
		return err
	}
	viper.Reset()
	viper.SetConfigFile(file)
	return viper.ReadInConfig()
}

func setField(key string, value any) error {
	v := viper.GetViper()
	v.Set(key, value)
	return saveAndReload(v) // want `read-modify-write of viper's configuration file without a lock: read at viperconf.go:\d+ \(viper.ReadInConfig\) and kept, written back here \(saveAndReload\)`
}

// withoutKey returns a copy of an instance's document without one key: a
// new instance read from the encoded settings, which stands for the
// document it was copied from.
func withoutKey(v *viper.Viper, key string) (*viper.Viper, error) {
	settings := v.AllSettings()
	delete(settings, key)
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(settings); err != nil {
		return nil, err
	}
	c := viper.New()
	c.SetConfigType("toml")
	if err := c.ReadConfig(&buf); err != nil {
		return nil, err
	}
	return c, nil
}

func deleteField(key string) error {
	c, err := withoutKey(viper.GetViper(), key)
	if err != nil {
		return err
	}
	return saveAndReload(c) // want `read-modify-write of viper's configuration file without a lock: read at viperconf.go:\d+ \(viper.ReadInConfig\) and kept, written back here \(saveAndReload\)`
}

// CONTROL: an instance read from a document the program makes, saved by
// the same helper: nothing read is written back.
func resetFields() error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(map[string]string{"region": "eu-west-1"}); err != nil {
		return err
	}
	c := viper.New()
	c.SetConfigType("toml")
	if err := c.ReadConfig(&buf); err != nil {
		return err
	}
	return saveAndReload(c)
}

// A caller that reads the file (a getter that re-reads it) and then calls
// the Set-only writer: its own read-modify-write, reported at the call.
func setFieldIfUnset(key string, value any) error {
	if err := viper.ReadInConfig(); err != nil {
		return err
	}
	if viper.IsSet(key) {
		return nil
	}
	return setField(key, value) // want `read-modify-write of viper's configuration file without a lock: read at line \d+ \(viper.ReadInConfig\), written back here \(setField\)`
}

// CONTROL for the refresh above: a call that reads and writes one file in
// its own order (a helper given a handle on it), made after the function
// wrote another file, is no refresh of what this function wrote: the call
// is not taken for a stale write-back of the document loadState reads.
const statePath = "state.yaml"

func loadState() (map[string]any, error) {
	b, err := os.ReadFile(statePath)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, yaml.Unmarshal(b, &m)
}

func bumpFile(f *os.File) error {
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return err
	}
	m["n"] = 1
	out, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = f.Write(out)
	return err
}

func logAndBump() error {
	if err := os.WriteFile("bump.log", []byte("bump\n"), 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(statePath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return bumpFile(f)
}

// A decision on a first read of viper's document, then a call of a
// function that reads the file again and writes it back: what the caller
// decided on may have changed by the time the callee writes.
func storeField(key, value string) error {
	_ = viper.ReadInConfig()
	viper.Set(key, value)
	return viper.WriteConfig() // want `read-modify-write of viper's configuration file without a lock: read at line \d+ \(viper.ReadInConfig\), written back here`
}

func redactIfPlain(key string) {
	if err := viper.ReadInConfig(); err != nil {
		return
	}
	if v := viper.GetString(key); len(v) > 4 && v[:4] != "****" {
		_ = storeField(key, "****"+v[4:]) // want `read-modify-write of viper's configuration file without a lock: read at line \d+ \(viper.ReadInConfig\) and decided on, then read again and written back here \(storeField\)`
	}
}

// CONTROL: the same call without a read before it decides on nothing.
func redactAlways(key string) {
	_ = storeField(key, "****")
}

// CONTROL: a read before a call that is made whatever was read is no
// decision.
func reloadAndRedact(key string) {
	_ = viper.ReadInConfig()
	_ = storeField(key, "****")
}

// CONTROL: a configuration created when there is none and then read back
// by the function that wrote it: its caller calls it only after a miss, so
// nothing read is written back.
var created = viper.New()

func createDefault(dir string) error {
	created.Set("region", "eu-west-1")
	if err := created.WriteConfigAs(dir + "/app.toml"); err != nil {
		return err
	}
	return created.ReadInConfig()
}

func loadCreated(dir string) error {
	created.AddConfigPath(dir)
	if _, ok := created.ReadInConfig().(viper.ConfigFileNotFoundError); ok {
		return createDefault(dir)
	}
	return nil
}
