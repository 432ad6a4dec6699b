//go:build windows

package fs

import "os"

// dirSyncSupported: Windows cannot flush a directory handle; NTFS journals
// the rename's metadata itself. A power loss right after WriteAtomic returns
// may still bring back the old content. Documented in doc.go.
const dirSyncSupported = false

// copyOwner: Windows has no uid/gid; ACLs are not copied.
func copyOwner(f *os.File, prev os.FileInfo) error { return nil }
