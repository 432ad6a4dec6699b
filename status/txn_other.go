//go:build !unix

package status

import "os"

// copyOwnerMode gives f the permission bits of prev (see txn_unix.go).
func copyOwnerMode(f *os.File, prev os.FileInfo) error {
	return f.Chmod(prev.Mode().Perm())
}
