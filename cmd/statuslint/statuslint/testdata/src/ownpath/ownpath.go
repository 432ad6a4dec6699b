// Package ownpath is a configuration that remembers the file it was
// loaded from and saves itself there, through a temporary file renamed
// onto the file, or onto the target of the file's symbolic link.
package ownpath

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
)

type File struct { // want File:`Save: writes \$recv.Filename`
	Filename string            `json:"-"`
	Aliases  map[string]string `json:"aliases"`
}

func newFile(name string) *File { return &File{Filename: name, Aliases: map[string]string{}} }

// Load reads dir/config.json, or gives an empty configuration.
func Load(dir string) (*File, error) {
	name := filepath.Join(dir, "config.json")
	f := newFile(name)
	r, err := os.Open(name)
	if err != nil {
		return f, nil
	}
	defer r.Close()
	return f, f.read(r)
}

func (f *File) read(r io.Reader) error { return json.NewDecoder(r).Decode(f) }

// Save writes the configuration to the file it was loaded from.
func (f *File) Save() error {
	tmp, err := os.CreateTemp(filepath.Dir(f.Filename), filepath.Base(f.Filename))
	if err != nil {
		return err
	}
	if err := json.NewEncoder(tmp).Encode(f); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	target := f.Filename
	if t, err := filepath.EvalSymlinks(target); err == nil {
		target = t
	} else {
		var pe *os.PathError
		if errors.As(err, &pe) {
			target = pe.Path
		}
	}
	return os.Rename(tmp.Name(), target)
}
