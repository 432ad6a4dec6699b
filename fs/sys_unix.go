//go:build unix

package fs

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// On Unix a rename failure is final: no retry.
var (
	transientRename func(error) bool
	renameBackoff   []time.Duration
)

// copyOwner gives f the owner and group of prev when they differ from ours.
// Only root may give a file away; an unprivileged writer may still set a
// group it belongs to. When the kernel refuses (EPERM) the new file keeps
// the writer's ownership: documented, not an error, because refusing would
// make any shared file unwritable for everyone but its owner.
func copyOwner(f *os.File, prev os.FileInfo) error {
	st, ok := prev.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid, gid := int(st.Uid), int(st.Gid)
	if uid != os.Geteuid() {
		err := f.Chown(uid, gid)
		if err == nil || !errors.Is(err, syscall.EPERM) {
			return err
		}
	}
	if gid != os.Getegid() {
		if err := f.Chown(-1, gid); err != nil && !errors.Is(err, syscall.EPERM) {
			return err
		}
	}
	return nil
}
