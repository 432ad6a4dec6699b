//go:build !unix && !windows

package fs

import (
	"os"
	"time"
)

var (
	transientRename func(error) bool
	renameBackoff   []time.Duration
)

func copyOwner(f *os.File, prev os.FileInfo) error { return nil }
