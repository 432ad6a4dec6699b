// Package aferofs reads and writes state through afero, whose file systems
// are interfaces: statuslint follows afero.ReadFile and afero.WriteFile to
// the implementations in sight (OsFs opens the file).
package aferofs

import (
	"encoding/json"

	"github.com/gofrs/flock"
	"github.com/spf13/afero"
)

type state struct {
	Runs int `json:"runs"`
}

// The file system behind an interface-typed package variable.
var appFs = afero.NewOsFs()

func bump(p string) error {
	data, err := afero.ReadFile(appFs, p)
	if err != nil {
		return err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	s.Runs++
	out, _ := json.Marshal(s)
	return afero.WriteFile(appFs, p, out, 0o644) // want `read-modify-write of p without a lock`
}

// Through a file opened on the Fs and an encoder.
func bumpFile(fs afero.Fs, p string) error {
	f, err := fs.Open(p)
	if err != nil {
		return err
	}
	var s state
	err = json.NewDecoder(f).Decode(&s)
	f.Close()
	if err != nil {
		return err
	}
	s.Runs++
	w, err := fs.Create(p) // want `read-modify-write of p without a lock`
	if err != nil {
		return err
	}
	defer w.Close()
	return json.NewEncoder(w).Encode(s)
}

func caller(p string) error { return bumpFile(appFs, p) }

// Under a lock on a sibling lock file: not reported.
func bumpLocked(p string) error {
	lock := flock.New(p + ".lock")
	if err := lock.Lock(); err != nil {
		return err
	}
	defer lock.Unlock()
	data, err := afero.ReadFile(appFs, p)
	if err != nil {
		return err
	}
	var s state
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	s.Runs++
	out, _ := json.Marshal(s)
	return afero.WriteFile(appFs, p, out, 0o644)
}
