//go:build !unix && !windows

package fs

import "os"

const dirSyncSupported = false

func copyOwner(f *os.File, prev os.FileInfo) error { return nil }
