package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/agentstate/core/fs"
)

// QuarantineSuffix, the time in UTC and, if that name is taken, "-2",
// "-3"..., name the file that [Doc.Quarantine] moves a document to.
const QuarantineSuffix = ".corrupt-"

// Quarantine moves the document aside, under the lock, unless usable holds
// for it, and returns its new name ("" if it was left in place); see
// status.Store.Quarantine.
func (d *Doc) Quarantine(ctx context.Context, usable func(doc []byte) bool) (moved string, err error) {
	name := d.path
	if err := ctx.Err(); err != nil {
		return "", Error("quarantine", name, err)
	}
	key, err := docPath(d.path)
	if err != nil {
		return "", Error("quarantine", name, err)
	}
	// A flock on a descriptor of its own excludes this process's Update
	// leaders too: they lock through descriptors of their own.
	unlock, err := lockFile(ctx, key+LockSuffix, d.perm)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return "", Error("quarantine", name, err)
	}
	defer unlock()
	// Like every locker: a transaction a crash left completes (and may make
	// the document usable) or is undone first.
	if _, err := recoverDoc(ctx, key, d.maxSize); err != nil {
		return "", Error("quarantine", name, err)
	}
	data, err := Read(name, key, d.maxSize)
	switch {
	case errors.Is(err, fs.ErrTooLarge):
	case err != nil:
		return "", err
	case data == nil:
		return "", Error("quarantine", name, os.ErrNotExist)
	case usable(data):
		return "", nil
	}
	moved, err = moveAside(key, time.Now())
	if err != nil {
		return "", Error("quarantine", name, err)
	}
	if key != name {
		moved = name + moved[len(key):] // named as the caller named the document
	}
	return moved, nil
}

// moveAside renames the file at key to a new name beside it (see
// [QuarantineSuffix]) and makes the move durable. The new name is reserved
// first with O_EXCL, so the rename never replaces another file.
func moveAside(key string, now time.Time) (string, error) {
	if err := syncFile(key); err != nil {
		return "", err
	}
	base := key + QuarantineSuffix + now.UTC().Format("20060102T150405Z")
	for i := 1; i <= 1000; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		f.Close()
		if err := os.Rename(key, name); err != nil {
			os.Remove(name)
			return "", err
		}
		return name, syncDir(filepath.Dir(key))
	}
	return "", fmt.Errorf("%w: %s-2 to -1000 are all taken", os.ErrExist, base)
}

// syncFile makes the document's bytes durable before they move: a
// document written without fsync by another program may have none yet.
// It opens without blocking and syncs only a regular file (something else
// planted meanwhile is refused, and not moved).
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fs.ErrNotRegular
	}
	return f.Sync()
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // a directory cannot be synced there (see package fs)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%w: %w", fs.ErrDurabilityUnknown, err)
	}
	return nil
}
