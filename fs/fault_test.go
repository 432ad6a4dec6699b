package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// faultDir wraps the pinned directory of the replace sequence to count
// fsyncs and inject failures the real disk will not produce on demand.
type faultDir struct {
	*os.Root
	fileSyncErr, dirSyncErr, renameErr error
	fileSyncs, dirSyncs, renames       int
}

func (d *faultDir) syncFile(f *os.File) error {
	d.fileSyncs++
	if d.fileSyncErr != nil {
		return d.fileSyncErr
	}
	return f.Sync()
}

func (d *faultDir) syncDir(f *os.File) error {
	d.dirSyncs++
	if d.dirSyncErr != nil {
		return d.dirSyncErr
	}
	return f.Sync()
}

func (d *faultDir) Rename(oldname, newname string) error {
	d.renames++
	if d.renameErr != nil {
		return &os.LinkError{Op: "renameat", Old: oldname, New: newname, Err: d.renameErr}
	}
	return d.Root.Rename(oldname, newname)
}

// replaceWithFaults runs the shared replace sequence on dir/f (holding
// "old") with the faults set in d and returns its error.
func replaceWithFaults(t *testing.T, d *faultDir) (dir string, err error) {
	t.Helper()
	dir = t.TempDir()
	mustWrite(t, filepath.Join(dir, "f"), "old", 0o640)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	d.Root = r
	prev, err := r.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	_, err = replace(d, "f", prev, 0o644, &source{data: []byte("new")})
	return dir, err
}

func TestFileSyncFailureIsNotRetried(t *testing.T) {
	d := &faultDir{fileSyncErr: &os.PathError{Op: "fsync", Path: "tmp", Err: syscall.EIO}}
	dir, err := replaceWithFaults(t, d)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want EIO", err)
	}
	if errors.Is(err, ErrDurabilityUnknown) {
		t.Fatalf("a failure before the rename must not claim the content was replaced: %v", err)
	}
	if d.fileSyncs != 1 || d.renames != 0 || d.dirSyncs != 0 {
		t.Fatalf("fsyncs=%d renames=%d dirSyncs=%d, want 1, 0, 0 (no retry, no rename)", d.fileSyncs, d.renames, d.dirSyncs)
	}
	if got := mustRead(t, filepath.Join(dir, "f")); got != "old" {
		t.Fatalf("destination = %q, want old", got)
	}
	assertNoTemp(t, dir)
}

func TestDirSyncFailureAfterRename(t *testing.T) {
	d := &faultDir{dirSyncErr: &os.PathError{Op: "fsync", Path: ".", Err: syscall.EIO}}
	dir, err := replaceWithFaults(t, d)
	if !errors.Is(err, ErrDurabilityUnknown) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("err = %v, want ErrDurabilityUnknown wrapping EIO", err)
	}
	if d.dirSyncs != 1 {
		t.Fatalf("dir fsyncs = %d, want exactly 1 (never retried)", d.dirSyncs)
	}
	if got := mustRead(t, filepath.Join(dir, "f")); got != "new" {
		t.Fatalf("destination = %q, want new (the rename happened)", got)
	}
	assertNoTemp(t, dir)
}

func TestDirSyncUnsupportedIsNotAnError(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EINVAL, syscall.ENOTSUP} {
		d := &faultDir{dirSyncErr: &os.PathError{Op: "fsync", Path: ".", Err: errno}}
		dir, err := replaceWithFaults(t, d)
		if err != nil {
			t.Fatalf("%v from a directory fsync: err = %v, want nil (unsupported)", errno, err)
		}
		if got := mustRead(t, filepath.Join(dir, "f")); got != "new" {
			t.Fatalf("destination = %q, want new", got)
		}
	}
}

func TestRenameFailureRemovesTemp(t *testing.T) {
	for _, tt := range []struct {
		errno syscall.Errno
		want  error
	}{
		{syscall.EACCES, syscall.EACCES},
		{syscall.EBUSY, ErrMountPoint}, // what Linux answers for a bind-mounted file
		{syscall.EXDEV, ErrMountPoint},
	} {
		d := &faultDir{renameErr: tt.errno}
		dir, err := replaceWithFaults(t, d)
		if !errors.Is(err, tt.want) || !errors.Is(err, tt.errno) {
			t.Fatalf("rename %v: err = %v, want %v", tt.errno, err, tt.want)
		}
		if d.fileSyncs != 1 || d.dirSyncs != 0 {
			t.Fatalf("fsyncs=%d dirSyncs=%d", d.fileSyncs, d.dirSyncs)
		}
		if got := mustRead(t, filepath.Join(dir, "f")); got != "old" {
			t.Fatalf("destination = %q, want old", got)
		}
		assertNoTemp(t, dir)
	}
}

// TestTempModeSetBeforeData checks the temp file already has the
// destination's mode before the first byte of data goes in: the source
// reader looks at the temp file when it is first asked for data.
func TestTempModeSetBeforeData(t *testing.T) {
	fsys, dir := newFs(t)
	mustWrite(t, filepath.Join(dir, "secret"), "old", 0o600)
	var seen []os.FileMode
	r := &inspectReader{data: []byte("new secret"), inspect: func() {
		for _, n := range listDir(t, dir) {
			if isTempName(n) {
				fi, err := os.Stat(filepath.Join(dir, n))
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() != 0 {
					t.Fatalf("temp file has %d bytes before the first Read", fi.Size())
				}
				seen = append(seen, fi.Mode().Perm())
			}
		}
	}}
	if _, err := fsys.WriteAtomicFrom(context.Background(), "secret", r, 0o666); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != 0o600 {
		t.Fatalf("temp file modes before data = %v, want [0600]", seen)
	}
}

// inspectReader calls inspect once, on the first Read, then serves data.
type inspectReader struct {
	data    []byte
	inspect func()
	done    bool
}

func (r *inspectReader) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		r.inspect()
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// flakyRename fails the first failures renames with err.
type flakyRename struct {
	*os.Root
	failures int
	err      error
	calls    int
}

func (d *flakyRename) Rename(oldname, newname string) error {
	d.calls++
	if d.calls <= d.failures {
		return d.err
	}
	return d.Root.Rename(oldname, newname)
}

// TestRenameRetry covers the bounded retry used on Windows (where virus
// scanners make renames fail briefly) with a fake transient error.
func TestRenameRetry(t *testing.T) {
	transientErr, finalErr := errors.New("transient"), errors.New("final")
	transient := func(err error) bool { return errors.Is(err, transientErr) }
	backoff := make([]time.Duration, 3) // zero delays: the test must not sleep
	for _, tt := range []struct {
		name      string
		failures  int
		err       error
		wantErr   error
		wantCalls int
	}{
		{"succeeds after transient failures", 2, transientErr, nil, 3},
		{"gives up after the backoff", 10, transientErr, transientErr, 4},
		{"never retries other errors", 10, finalErr, finalErr, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "a"), "x", 0o644)
			r, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			d := &flakyRename{Root: r, failures: tt.failures, err: tt.err}
			err = renameRetry(d, "a", "b", transient, backoff)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if d.calls != tt.wantCalls {
				t.Fatalf("%d rename calls, want %d", d.calls, tt.wantCalls)
			}
		})
	}
}

// recordOpen records the permission the temp file is created with.
type recordOpen struct {
	*os.Root
	perms []os.FileMode
}

func (d *recordOpen) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	d.perms = append(d.perms, perm)
	return d.Root.OpenFile(name, flag, perm)
}

// TestTempCreatedOwnerOnly: when replacing an existing file, the temp file
// is created owner-only, so that nobody can open it before it has the
// destination's owner and mode (a descriptor opened then would read the new
// data later). A new file is created with the requested perm directly.
func TestTempCreatedOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "shared"), "old", 0o664)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := &recordOpen{Root: r}
	prev, _ := r.Lstat("shared")
	if _, err := replace(d, "shared", prev, 0o644, &source{data: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := replace(d, "fresh", nil, 0o640, &source{data: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if want := []os.FileMode{0o600, 0o640}; !slices.Equal(d.perms, want) {
		t.Fatalf("temp files created with %v, want %v", d.perms, want)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "shared")); fi.Mode().Perm() != 0o664 {
		t.Fatalf("replaced file mode %v, want 0664", fi.Mode().Perm())
	}
}
