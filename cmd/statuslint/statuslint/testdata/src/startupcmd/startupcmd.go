// Package startupcmd saves a document that package startup loaded at
// start-up, in an unexported function.
package startupcmd

import "startup"

func SetCurrent(name string) error {
	startup.Settings.Current = name
	return startup.Save(startup.SettingsPath, startup.Settings) // want `read-modify-write of os.Getenv\("HOME"\)\+"/\.app/settings\.json" without a lock: read at startup.go:\d+ \(load\) and kept, written back here \(startup.Save\)`
}

// CONTROL: a document made afresh.
func Reset() error {
	return startup.Save(startup.SettingsPath, &startup.Config{})
}
