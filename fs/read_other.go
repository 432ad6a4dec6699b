//go:build !unix

package fs

// Without O_NOFOLLOW and O_NONBLOCK, [ReadRegular] relies on its Lstat and
// fstat checks alone.
const (
	oNoFollow = 0
	oNonblock = 0
)
