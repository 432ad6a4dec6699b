//go:build unix && !linux

package watch

import (
	"os"
	"syscall"
)

// fileID returns the device and inode number of fi (the field names of
// the change time differ between systems; the modification time and size
// stand in for it).
func fileID(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino), 0
}
