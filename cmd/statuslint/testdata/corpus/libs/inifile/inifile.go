// Package inifile reads and writes INI files through gopkg.in/ini.v1 (the
// AWS configuration and credentials files are such files): a File loaded
// from a path, changed and saved back there is a read-modify-write.
package inifile

import (
	"github.com/gofrs/flock"
	"gopkg.in/ini.v1"
)

// setRegion loads the file, changes a key and saves the whole file back.
func setRegion(path, profile, region string) error {
	cfg, err := ini.Load(path)
	if err != nil {
		return err
	}
	cfg.Section(profile).Key("region").SetValue(region)
	return cfg.SaveTo(path) // want `read-modify-write of path without a lock`
}

// removeProfile does the same through LoadSources with options.
func removeProfile(path, profile string) error {
	cfg, err := ini.LoadSources(ini.LoadOptions{Loose: true}, path)
	if err != nil {
		return err
	}
	cfg.DeleteSection(profile)
	return cfg.SaveToIndent(path, "  ") // want `read-modify-write of path without a lock`
}

// writeFresh saves a new file: nothing read is written back (CONTROL).
func writeFresh(path, profile, region string) error {
	cfg := ini.Empty()
	cfg.Section(profile).Key("region").SetValue(region)
	return cfg.SaveTo(path)
}

// setRegionLocked holds a file lock across the load and the save (CONTROL).
func setRegionLocked(path, profile, region string) error {
	l := flock.New(path + ".lock")
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	cfg, err := ini.Load(path)
	if err != nil {
		return err
	}
	cfg.Section(profile).Key("region").SetValue(region)
	return cfg.SaveTo(path)
}

// export loads one file and writes another (CONTROL: two files).
func export(from, to string) error {
	cfg, err := ini.Load(from)
	if err != nil {
		return err
	}
	return cfg.SaveTo(to)
}

// saveNamedJSON shows SaveTo's write is in place: it truncates the file
// (ioutil.WriteFile), which is reported for a .json path as for any.
func saveNamedJSON(cfg *ini.File) error {
	return cfg.SaveTo("settings.json") // want `not atomic: ini.File.SaveTo truncates "settings.json" in place`
}
