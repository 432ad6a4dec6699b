package fs

import (
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strings"
)

// local checks a caller's slash-separated name and returns it in the
// operating system's form. Names follow io/fs.ValidPath: relative, no "."
// or ".." elements (except "." alone, the root), no empty elements. An
// absolute name or one with ".." is reported as ErrOutsideRoot; [os.Root]
// would refuse most of them too, but checking lexically first gives one
// clear error for every platform.
func local(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if !iofs.ValidPath(name) {
		if strings.HasPrefix(name, "/") || filepath.IsAbs(name) || hasDotDot(name) {
			return "", ErrOutsideRoot
		}
		return "", fmt.Errorf("%w: not a clean slash-separated relative name", ErrInvalidName)
	}
	l, err := filepath.Localize(name)
	if err != nil {
		// Windows: a backslash, a drive letter, a reserved name (NUL, COM1).
		return "", fmt.Errorf("%w: %v", ErrInvalidName, err)
	}
	return l, nil
}

func hasDotDot(name string) bool {
	for elem := range strings.SplitSeq(name, "/") {
		if elem == ".." {
			return true
		}
	}
	return false
}
