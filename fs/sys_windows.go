//go:build windows

package fs

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// copyOwner: Windows has no uid/gid; ACLs are not copied.
func copyOwner(f *os.File, prev os.FileInfo) error { return nil }

const errorSharingViolation syscall.Errno = 32 // ERROR_SHARING_VIOLATION

// transientRename: virus scanners and indexers open new files briefly,
// making MoveFileEx fail with access denied or a sharing violation. A
// reader that keeps the destination open without FILE_SHARE_DELETE causes
// the same errors for longer: after the bounded retries below (about 0.3 s
// in all) the error is returned and the temp file removed.
func transientRename(err error) bool {
	return errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, errorSharingViolation)
}

var renameBackoff = []time.Duration{
	1 * time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond,
}
