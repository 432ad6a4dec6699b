//go:build unix && !linux

package journal

import "syscall"

// atCalls is false where the syscall package lacks openat, unlinkat and
// renameat: a directory's files are reached by path (see dir).
const atCalls = false

func openat(int, string, int, uint32) (int, error) { return -1, syscall.ENOSYS }
func fstatat(int, string, *syscall.Stat_t) error   { return syscall.ENOSYS }
func unlinkat(int, string) error                   { return syscall.ENOSYS }
func renameat(int, string, int, string) error      { return syscall.ENOSYS }
