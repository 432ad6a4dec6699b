package watch

import (
	"os"
	"syscall"
)

// fileID returns the device, inode number and change time of fi.
func fileID(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano()
}
