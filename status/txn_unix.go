//go:build unix

package status

import (
	"errors"
	"os"
	"syscall"
)

// copyOwnerMode gives f, the new content of a document, the owner (when we
// may: root, or a group we belong to) and the permission bits of prev, the
// document it will replace, as [fs.WriteAtomic] does.
func copyOwnerMode(f *os.File, prev os.FileInfo) error {
	if st, ok := prev.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
		err := f.Chown(int(st.Uid), int(st.Gid))
		if errors.Is(err, syscall.EPERM) {
			err = f.Chown(-1, int(st.Gid)) // a group we belong to
		}
		if err != nil && !errors.Is(err, syscall.EPERM) {
			return err
		}
	}
	// After the chown: chown may clear setuid/setgid bits.
	return f.Chmod(prev.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky))
}

// lexists reports whether name exists, without following a link; it costs
// one lstat and no error value when it does not (every lock acquisition
// asks it, for the transaction marker).
func lexists(name string) (bool, error) {
	var st syscall.Stat_t
	for {
		switch err := syscall.Lstat(name, &st); err {
		case nil:
			return true, nil
		case syscall.ENOENT:
			return false, nil
		case syscall.EINTR:
			continue
		default:
			return false, &os.PathError{Op: "lstat", Path: name, Err: err}
		}
	}
}
