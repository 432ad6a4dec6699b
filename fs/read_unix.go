//go:build unix

package fs

import "syscall"

// Open flags of [ReadRegular]: do not follow a final symbolic link, and do
// not wait for a writer when the name is (or became) a named pipe.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonblock = syscall.O_NONBLOCK
)
