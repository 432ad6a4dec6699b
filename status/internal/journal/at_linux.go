package journal

import "syscall"

// atCalls: recovery reaches the files of a directory through its
// descriptor (see dir).
const atCalls = true

// oPath is O_PATH, which the syscall package lacks on some architectures:
// a descriptor that names a file without opening it (no device is opened,
// no named pipe waited for).
const oPath = 0x200000

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	return syscall.Openat(dirfd, name, flags, mode)
}

// fstatat is fstatat(2) with AT_SYMLINK_NOFOLLOW, which the syscall package
// lacks on some architectures: an O_PATH descriptor of the file, never
// following a link, and fstat.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	fd, err := syscall.Openat(dirfd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	return syscall.Fstat(fd, st)
}

func unlinkat(dirfd int, name string) error { return syscall.Unlinkat(dirfd, name) }

func renameat(fromfd int, from string, tofd int, to string) error {
	return syscall.Renameat(fromfd, from, tofd, to)
}
