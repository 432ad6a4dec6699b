package syncshare

import (
	"os"
	"sync"
	"syscall"
)

// fsKey identifies a file system: its statfs f_fsid.
type fsKey = syscall.Fsid

// Magic numbers (statfs f_type) of the file systems whose syncfs is
// shared: local disk file systems whose syncfs writes back every dirty
// inode and commits (or writes) all metadata before it returns.
const (
	ext4Magic  = 0xEF53 // ext2, ext3, ext4
	xfsMagic   = 0x58465342
	btrfsMagic = 0x9123683E
)

// syncfsReportsErrors: syncfs(2) returns write-back errors only since
// Linux 5.8; before, it returned 0 after a failed write-back, so it cannot
// stand in for fsync there.
var syncfsReportsErrors = sync.OnceValue(func() bool {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return false
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	return kernelAtLeast(string(rel), 5, 8)
})

// kernelAtLeast parses the leading "major.minor" of a kernel release.
func kernelAtLeast(release string, major, minor int) bool {
	var v [2]int
	i := 0
	for k := 0; k < 2; k++ {
		start := i
		for i < len(release) && release[i] >= '0' && release[i] <= '9' {
			v[k] = v[k]*10 + int(release[i]-'0')
			i++
		}
		if i == start {
			return false
		}
		if k == 0 {
			if i >= len(release) || release[i] != '.' {
				return false
			}
			i++
		}
	}
	return v[0] > major || v[0] == major && v[1] >= minor
}

// Shared reports whether writes on f's file system share their syncs.
func Shared(f *os.File) bool {
	_, ok := sharedSyncKey(f)
	return ok
}

// sharedSyncKey reports whether replaces on f's file system may share
// syncfs rounds, and the file system's key.
func sharedSyncKey(f *os.File) (fsKey, bool) {
	if !syncfsReportsErrors() {
		return fsKey{}, false
	}
	var st syscall.Statfs_t
	if err := fstatfs(f, &st); err != nil {
		return fsKey{}, false
	}
	switch uint32(st.Type) {
	case ext4Magic, xfsMagic, btrfsMagic:
		return st.Fsid, true
	}
	return fsKey{}, false
}

func fstatfs(f *os.File, st *syscall.Statfs_t) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fstatfs(int(fd), st)
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// syncfs commits the whole file system holding fd.
func syncfs(fd int) error {
	for {
		_, _, e := syscall.Syscall(sysSyncfs, uintptr(fd), 0, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return &os.SyscallError{Syscall: "syncfs", Err: e}
	}
}
