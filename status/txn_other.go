//go:build !unix

package status

import (
	"errors"
	"os"
)

// copyOwnerMode gives f the permission bits of prev (see txn_unix.go).
func copyOwnerMode(f *os.File, prev os.FileInfo) error {
	return f.Chmod(prev.Mode().Perm())
}

// lexists reports whether name exists, without following a link.
func lexists(name string) (bool, error) {
	_, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
