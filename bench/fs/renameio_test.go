//go:build !windows

package fs_test

import (
	"os"

	renameio "github.com/google/renameio/v2"
)

func init() {
	renameioWriteFile = func(name string, data []byte, perm os.FileMode) error {
		return renameio.WriteFile(name, data, perm)
	}
}
