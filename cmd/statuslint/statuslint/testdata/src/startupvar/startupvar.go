// Package startupvar holds two forms of a document loaded at start-up and
// saved later, each with a CONTROL that must not be reported:
//
//   - a loader given its path decodes straight into a package-level
//     variable, the path being a variable a flag sets or else a default,
//     and a save helper spells the same choice again;
//   - a constructor whose set-up reads the document, keeps it in the object
//     it builds (and saves it once itself), and then saves it again.
package startupvar

import (
	"encoding/json"
	"os"
	"syscall"
)

type Config struct {
	Keys    map[string]string `json:"keys"`
	Current string            `json:"current"`
}

// Current is the document the program works on; Override a path a flag
// may set.
var (
	Current  Config
	Override string
)

func defaultPath() string { return os.Getenv("HOME") + "/.tool.json" }

// Load runs at start-up.
func Load() {
	if Override != "" {
		load(Override)
	} else {
		load(defaultPath())
	}
}

func load(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = json.NewDecoder(f).Decode(&Current)
	if Current.Keys == nil {
		Current.Keys = map[string]string{}
	}
}

// Save is what the handlers call after changing Current.
func Save() error {
	var path string
	if Override != "" {
		path = Override
	} else {
		path = defaultPath()
	}
	data, err := json.Marshal(Current)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600) // want `read-modify-write of .* without a lock: read at startupvar.go:\d+ \(load\) and kept, written back here \(os.WriteFile\)`
}

func RemoveKey(name string) error {
	delete(Current.Keys, name)
	return Save()
}

// CONTROL: a reset writes a fresh document to the same file.
func Reset() error {
	path := defaultPath()
	if Override != "" {
		path = Override
	}
	data, err := json.Marshal(Config{Keys: map[string]string{}})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Tool is a long-lived object: its set-up reads the configuration into it.
type Tool struct {
	path string
	conf Config
}

func (t *Tool) setup() error {
	data, err := os.ReadFile(t.path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &t.conf); err != nil {
		return err
	}
	if t.conf.Keys == nil {
		t.conf.Keys = map[string]string{}
		return t.save() // want `read-modify-write of t without a lock: read at line \d+ \(os.ReadFile\), written back here \(t.save\)`
	}
	return nil
}

func (t *Tool) save() error {
	data, err := json.Marshal(t.conf)
	if err != nil {
		return err
	}
	return os.WriteFile(t.path, data, 0o600)
}

func NewTool(path, current string) (*Tool, error) {
	t := &Tool{path: path}
	if err := t.setup(); err != nil {
		return nil, err
	}
	if current != "" {
		t.conf.Current = current
		if err := t.save(); err != nil { // want `read-modify-write of .* without a lock: read at line \d+ \(t.setup\), written back here \(t.save\)`
			return nil, err
		}
	}
	return t, nil
}

// bump reads, changes and writes back a file by itself and keeps nothing.
func bump(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	c.Current += "+"
	out, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600) // want `read-modify-write of path without a lock`
}

// CONTROL: two calls of a function that makes its own cycle, keeping
// nothing, are not another cycle of the caller's.
func bumpTwice(path string) error {
	if err := bump(path); err != nil {
		return err
	}
	return bump(path)
}

// CONTROL: the constructor's save under a lock that the set-up's read was
// made under too.
func NewToolLocked(path, current string) (*Tool, error) {
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	t := &Tool{path: path}
	if err := t.setup(); err != nil {
		return nil, err
	}
	t.conf.Current = current
	if err := t.save(); err != nil {
		return nil, err
	}
	return t, nil
}

// A constructor that saves the document again after a first save: each
// save writes back what the set-up read.
func NewToolTwice(path, current, key string) (*Tool, error) {
	t := &Tool{path: path}
	if err := t.setup(); err != nil {
		return nil, err
	}
	if current != "" {
		t.conf.Current = current
		if err := t.save(); err != nil { // want `read-modify-write of .* without a lock: read at line \d+ \(t.setup\), written back here \(t.save\)`
			return nil, err
		}
	}
	if key != "" {
		t.conf.Keys[key] = current
		if err := t.save(); err != nil { // want `read-modify-write of .* without a lock: read at line \d+ \(t.setup\), written back here \(t.save\)`
			return nil, err
		}
	}
	return t, nil
}

// CONTROL: saves on two exclusive paths are one write-back.
func NewToolEither(path, current string) (*Tool, error) {
	t := &Tool{path: path}
	if err := t.setup(); err != nil {
		return nil, err
	}
	if current != "" {
		t.conf.Current = current
		return t, t.save() // want `read-modify-write of .* without a lock: read at line \d+ \(t.setup\), written back here \(t.save\)`
	}
	t.conf.Current = "default"
	return t, t.save()
}

// CONTROL: names taken out of the document, given to a function that
// writes a fresh document, do not carry the document.
var names []string

func loadNames() {
	load(defaultPath())
	for k := range Current.Keys {
		names = append(names, k)
	}
}

func resetWith(list []string) error {
	data, err := json.Marshal(Config{Keys: map[string]string{}})
	if err != nil {
		return err
	}
	_ = list
	if err := os.WriteFile(defaultPath()+".tmp", data, 0o600); err != nil {
		return err
	}
	return os.Rename(defaultPath()+".tmp", defaultPath())
}

func resetNamed() error { return resetWith(names) }
