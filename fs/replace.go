package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/internal/syncshare"
)

// This file holds the one implementation of the replace sequence. Both the
// sandboxed Fs and the package-level functions resolve the destination,
// pin its directory as an *os.Root and call replace: every step after that
// is an *at system call relative to the pinned directory, so a concurrent
// rename of a parent directory cannot make the temp file, the rename and
// the directory sync land in different places.

// dirOps is the pinned destination directory. *os.Root implements it; tests
// wrap it to count and fail operations.
type dirOps interface {
	OpenFile(name string, flag int, perm os.FileMode) (*os.File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	Open(name string) (*os.File, error)
}

// syncer is implemented by test wrappers of dirOps that observe or fail
// fsync calls. Production code uses (*os.File).Sync.
type syncer interface {
	syncFile(f *os.File) error
	syncDir(d *os.File) error
}

// opener opens the directory that holds a destination: an *os.Root for the
// sandbox, hostDirs for plain paths.
type opener interface {
	OpenRoot(name string) (*os.Root, error)
	Stat(name string) (os.FileInfo, error)
}

// hostDirs opens directories of the host file system by path.
type hostDirs struct{}

func (hostDirs) OpenRoot(name string) (*os.Root, error) { return os.OpenRoot(name) }

// maxSymlinks bounds how many links pin follows at the destination, like
// the kernel's limit for a path walk.
const maxSymlinks = 40

// A linkPolicy says what pin does with a symbolic link at the destination.
type linkPolicy int

const (
	followInRoot linkPolicy = iota // follow relative links that stay inside the root (Fs)
	followAny                      // follow any link (WriteAtomic)
	refuseLinks                    // refuse with ErrNotRegular (WriteAtomicNoFollow)
)

// pin resolves the destination name and opens its directory.
//
// Symlink policy: a symbolic link at the destination is followed, so the
// link stays a link and its target is replaced atomically (what
// [os.WriteFile] does, minus the truncation). Through an [Fs] the target must
// stay inside the root; absolute targets are refused there. With followAny
// (plain paths) any target is followed. A link whose target does not exist
// yet is followed too: the target is created. With refuseLinks a link is an
// error; one planted after this check is replaced by the rename, never
// followed, because rename(2) does not follow its final component.
//
// It returns the pinned directory, the final base name and the existing
// file's info (nil when the destination does not exist yet).
func pin(o opener, name string, links linkPolicy) (d *os.Root, base string, prev os.FileInfo, err error) {
	given := name // the caller's error names it: only a link target is named here
	for hops := 0; ; hops++ {
		dir, b := split(name)
		if b == "" || b == "." || b == ".." {
			return nil, "", nil, fmt.Errorf("%w: a directory%s", ErrNotRegular, linkTarget(name, given))
		}
		d, err = o.OpenRoot(dir)
		if err != nil {
			return nil, "", nil, parentError(o, dir, err)
		}
		fi, err := d.Lstat(b)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0 && links == refuseLinks:
			d.Close()
			return nil, "", nil, fmt.Errorf("%w: %s%s", ErrNotRegular, kind(fi.Mode()), linkTarget(name, given))
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			target, err := d.Readlink(b)
			d.Close()
			switch {
			case err != nil:
				return nil, "", nil, err
			case hops == maxSymlinks:
				return nil, "", nil, fmt.Errorf("following symlinks: %w", syscall.ELOOP)
			case filepath.IsAbs(target) && links == followInRoot:
				return nil, "", nil, fmt.Errorf("%w: symlink%s points to %s", ErrOutsideRoot, linkTarget(name, given), target)
			case filepath.IsAbs(target) || dir == ".":
				name = target
			default:
				// Not filepath.Join: cleaning "dir/../x" lexically is wrong
				// when dir is itself a link. The walk resolves ".." after dir.
				name = dir + string(os.PathSeparator) + target
			}
		case err == nil && !fi.Mode().IsRegular():
			d.Close()
			return nil, "", nil, fmt.Errorf("%w: %s%s", ErrNotRegular, kind(fi.Mode()), linkTarget(name, given))
		case err == nil:
			return d, b, fi, nil
		case errors.Is(err, os.ErrNotExist):
			return d, b, nil, nil
		default:
			d.Close()
			return nil, "", nil, err
		}
	}
}

// linkTarget names the file that links at given led to, for an error about
// it; "" when no link was followed (the caller's error names given).
func linkTarget(name, given string) string {
	if name == given {
		return ""
	}
	return " (link target " + name + ")"
}

// parentError explains why the destination's directory could not be
// opened. [os.Root] reports a parent that is a file with an error that does
// not match syscall.ENOTDIR, so that case is checked (on the error path only).
func parentError(o opener, dir string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("parent directory: %w", withoutPath(err, dir))
	}
	if fi, serr := o.Stat(dir); serr == nil && !fi.IsDir() {
		return fmt.Errorf("parent directory: %w", syscall.ENOTDIR)
	}
	return err
}

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file" // os.ModeIrregular, or a kind this list does not know
}

// split returns the directory and final element of name without cleaning
// it ("." when there is no directory part).
func split(name string) (dir, base string) {
	i := len(name) - 1
	for i >= 0 && !os.IsPathSeparator(name[i]) {
		i--
	}
	switch {
	case i < 0:
		return ".", name
	case i == 0:
		return name[:1], name[1:]
	}
	return name[:i], name[i+1:]
}

// source is what replace writes: data, or everything read from r.
type source struct {
	ctx  context.Context
	data []byte
	r    io.Reader
}

// streamSource checks the arguments of the streaming writes: a nil reader
// must not silently become an empty file.
func streamSource(ctx context.Context, r io.Reader) (*source, error) {
	switch {
	case ctx == nil:
		return nil, fmt.Errorf("%w: nil context", os.ErrInvalid)
	case r == nil:
		return nil, fmt.Errorf("%w: nil reader", os.ErrInvalid)
	}
	return &source{ctx: ctx, r: r}, nil
}

// replace atomically replaces base in d with src. prev is the existing
// destination (nil if none); perm applies to a new file, minus umask.
//
// The sequence: create ".<base>.<random>.tmp" with O_EXCL in d; copy the
// existing file's owner and mode onto it by descriptor; write; fsync; close;
// rename over base; fsync d. Any failure before the rename removes the temp
// file and leaves base untouched. A failed fsync is never retried: after a
// writeback error Linux marks the pages clean, so a second fsync can
// succeed with the data gone. Concurrent replaces on one file system may
// share their two syncs (see [syncshare]).
func replace(d dirOps, base string, prev os.FileInfo, perm os.FileMode, src *source) (n int64, err error) {
	createPerm := perm.Perm()
	if prev != nil {
		// Owner-only until copyMode has set the final owner and mode: no
		// one else can open the temp file in between and read the data later
		// through that descriptor.
		createPerm = prev.Mode().Perm() & 0o700
	}
	f, tmp, err := createTemp(d, base, createPerm)
	if err != nil {
		return 0, fmt.Errorf("create temp file: %w", err)
	}
	seq := syncshare.NextSeq()
	var sh *syncshare.Share
	if _, wrapped := d.(syncer); !wrapped {
		sh = syncshare.Enter(f)
	}
	defer sh.Leave()
	closed := false
	defer func() {
		if !closed {
			// A caller's reader panicked: clean up as for any failure
			// and let the panic go on.
			f.Close()
			d.Remove(tmp)
		}
	}()
	if prev != nil {
		err = copyMode(f, prev)
	}
	if err == nil {
		n, err = src.writeTo(f)
	}
	if err == nil {
		err = sh.Sync(int(f.Fd()), seq, func() error { return syncFile(d, f) })
	}
	cerr := f.Close()
	closed = true
	if err == nil {
		err = cerr
	}
	if err != nil {
		d.Remove(tmp) // best effort; SweepTemp collects what a crash leaves
		return n, err
	}
	// The directory is opened before the rename, so that a shared sync's
	// error report (see syncshare.Share.Sync) covers the rename.
	df, dseq, derr := openDir(d)
	if err = renameRetry(d, tmp, base, transientRename, renameBackoff); err != nil {
		if df != nil {
			df.Close()
		}
		d.Remove(tmp)
		if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) {
			err = fmt.Errorf("%w: %w", ErrMountPoint, err)
		}
		return n, err
	}
	if derr != nil {
		return n, durabilityUnknown(derr)
	}
	return n, durabilityUnknown(syncOpenDir(d, df, dseq, sh))
}

// renameRetry renames, retrying a failure that transient classifies as
// passing, after each delay in backoff. Only Windows has transient rename
// failures (a virus scanner or indexer holding the file briefly); on Unix
// transient is nil and the first error is final.
func renameRetry(d dirOps, oldname, newname string, transient func(error) bool, backoff []time.Duration) error {
	err := d.Rename(oldname, newname)
	for _, delay := range backoff {
		if err == nil || transient == nil || !transient(err) {
			break
		}
		time.Sleep(delay)
		err = d.Rename(oldname, newname)
	}
	return err
}

// createTemp creates a new temp file for base in d. O_EXCL guarantees the
// name is ours; a collision (astronomically unlikely, or a planted file)
// just draws another name.
func createTemp(d dirOps, base string, perm os.FileMode) (f *os.File, name string, err error) {
	for try := 0; ; try++ {
		name = tempName(base)
		f, err = d.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 9 {
			return f, name, err
		}
	}
}

// copyMode gives the temp file the destination's owner (when it differs and
// we may) and permission bits, by descriptor, before any data is written.
// With the owner-only creation mode, a 0600 secret is never readable by
// others, not even through the temp file.
func copyMode(f *os.File, prev os.FileInfo) error {
	if err := copyOwner(f, prev); err != nil {
		return err
	}
	// After the chown: chown may clear setuid/setgid bits.
	return f.Chmod(prev.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky))
}

func syncFile(d dirOps, f *os.File) error {
	if s, ok := d.(syncer); ok {
		return s.syncFile(f)
	}
	return f.Sync()
}

// openDir opens d itself for syncOpenDir (nil where directories cannot be
// synced), with its open sequence number (see syncshare.Share.Sync).
func openDir(d dirOps) (df *os.File, seq uint64, err error) {
	if !syncshare.DirSync {
		return nil, 0, nil
	}
	df, err = d.Open(".")
	return df, syncshare.NextSeq(), err
}

// syncOpenDir makes the directory entries of d durable (the rename, a
// created or removed entry) through df from openDir, and closes df. See
// durabilityUnknown for unsupported file systems.
func syncOpenDir(d dirOps, df *os.File, seq uint64, sh *syncshare.Share) error {
	if df == nil {
		return nil
	}
	err := sh.Sync(int(df.Fd()), seq, func() error {
		if s, ok := d.(syncer); ok {
			return s.syncDir(df)
		}
		return df.Sync()
	})
	if cerr := df.Close(); err == nil {
		err = cerr
	}
	return err
}

// Temp file names: "." + base + "." + 16 lowercase hex digits + ".tmp".
// The hidden prefix keeps them out of globs and listings; the exact shape
// lets [SweepTemp] recognise them without touching anything else.
const (
	tempRandLen = 16
	tempSuffix  = ".tmp"
	maxNameLen  = 255 // NAME_MAX on Linux, macOS and Windows
	tempExtra   = 1 + 1 + tempRandLen + len(tempSuffix)
)

func tempName(base string) string {
	if len(base) > maxNameLen-tempExtra {
		// Keep the temp name legal for long bases; cut on a rune boundary
		// so it stays valid UTF-8 (macOS requires it).
		cut := maxNameLen - tempExtra
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	var buf [maxNameLen]byte
	b := append(buf[:0], '.')
	b = append(b, base...)
	b = append(b, '.')
	b = appendRandHex(b)
	b = append(b, tempSuffix...)
	return string(b)
}

// isTempName reports whether name has exactly the shape tempName produces.
func isTempName(name string) bool {
	if len(name) <= tempExtra || name[0] != '.' || !strings.HasSuffix(name, tempSuffix) {
		return false
	}
	hex := name[len(name)-len(tempSuffix)-tempRandLen : len(name)-len(tempSuffix)]
	if name[len(name)-tempExtra+1] != '.' {
		return false
	}
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// copyBufPool holds the fixed-size buffers of the streaming writes, so the
// memory a write uses does not grow with the size of what it writes.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func (s *source) writeTo(f *os.File) (int64, error) {
	if s.r == nil {
		n, err := f.Write(s.data)
		return int64(n), err
	}
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	var n int64
	for {
		// Checked between chunks: a Read blocked inside r is not interrupted.
		if err := s.ctx.Err(); err != nil {
			return n, err
		}
		nr, rerr := s.r.Read(buf)
		if nr > 0 {
			nw, werr := f.Write(buf[:nr])
			n += int64(nw)
			if werr != nil {
				return n, werr
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, fmt.Errorf("read source: %w", rerr)
		}
	}
}

// appendRandHex appends tempRandLen random hex digits. The runtime's
// per-thread generator is enough: O_EXCL, not unpredictability, makes the
// name safe, and it costs nanoseconds, not a getrandom call.
func appendRandHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	x := rand.Uint64()
	for i := 0; i < tempRandLen; i++ {
		b = append(b, digits[x>>60])
		x <<= 4
	}
	return b
}
