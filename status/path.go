package status

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/agentstate/core/fs"
)

var errEmptyPath = errors.New("empty path")

// pathError reports a failed operation on the document at path. It names
// path once: an *os.PathError or *fs.PathError for path itself or its lock
// file gives only its operation and cause.
func pathError(op, path string, err error) error {
	if path == "" {
		return fmt.Errorf("status: %s: %w", op, err)
	}
	return fmt.Errorf("status: %s %s: %w", op, path, withoutPath(err, path))
}

func withoutPath(err error, path string) error {
	var pathOp, errPath string
	var cause error
	switch e := err.(type) {
	case *os.PathError:
		pathOp, errPath, cause = e.Op, e.Path, e.Err
	case *fs.PathError:
		pathOp, errPath, cause = e.Op, e.Path, e.Err
	default:
		return err
	}
	switch errPath {
	case path:
		return fmt.Errorf("%s: %w", pathOp, cause)
	case path + LockSuffix:
		return fmt.Errorf("%s lock file: %w", pathOp, cause)
	}
	return err
}

// checkPath refuses names that cannot be a document file: empty, or ending
// in a path separator, "." or ".." (the kernel would look for a directory).
func checkPath(path string) error {
	if path == "" {
		return errEmptyPath
	}
	_, base := splitPath(path)
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%w: a document path must name a file, not end in %q", fs.ErrInvalidName, path[len(path)-max(len(base), 1):])
	}
	return nil
}

// docPath returns the absolute name of the file that path names, as the
// kernel resolves it when the call starts: the key under which this process
// serialises the document's mutations, and the name its lock file, reads
// and writes use. Cleaning "dir/../x" as text is wrong when dir is a
// symbolic link (the kernel goes to the parent of the link's target), so a
// path with ".." has its directory resolved through its links first. The
// final element is not resolved: the document itself is never a link.
func docPath(path string) (string, error) {
	if err := checkPath(path); err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + string(os.PathSeparator) + path // not Join: it cleans
	}
	// Windows resolves ".." as text before the file system sees the name.
	if runtime.GOOS == "windows" || !slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return filepath.Clean(path), nil
	}
	dir, base := splitPath(path)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(real, base), nil
}

// splitPath returns path's directory and final element without cleaning.
func splitPath(path string) (dir, base string) {
	i := len(path) - 1
	for i >= 0 && !os.IsPathSeparator(path[i]) {
		i--
	}
	return path[:i+1], path[i+1:]
}
