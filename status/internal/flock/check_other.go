//go:build !(darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd)

package flock

import (
	"fmt"
	"os"

	"github.com/agentstate/core/fs"
)

// Check reports whether a writer of the document doc would refuse its lock
// file name: here, where there are no owners to check, only for not being
// a regular file (fs.ErrNotRegular). A missing lock file is an error
// matching os.ErrNotExist.
func Check(name, doc string) error {
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "check", Path: name, Err: fmt.Errorf("%w (%v)", fs.ErrNotRegular, fi.Mode().Type())}
	}
	return nil
}
