// Package locks changes a state file under file locks of several kinds
// (none reported) and, as controls, without one or across two lock
// sessions (reported).
package locks

import (
	"encoding/json"
	"io"
	"os"
	"syscall"

	"github.com/gofrs/flock"
	"github.com/rogpeppe/go-internal/lockedfile"
	"golang.org/x/sys/unix"
)

type doc struct {
	Runs int `json:"runs"`
}

func modify(data []byte) []byte {
	var d doc
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return out
}

// gofrs/flock on a sibling lock file, the new content renamed onto the
// document.
func withFlock(p string) error {
	l := flock.New(p + ".lock")
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p+".tmp", modify(data), 0o644); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// The control: the same without the lock.
func renameWithoutLock(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p+".tmp", modify(data), 0o644); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p) // want `read-modify-write of p without a lock`
}

// A try-lock that may fail to lock protects only on the path where it
// succeeded.
func withTryLock(p string) error {
	l := flock.New(p + ".lock")
	ok, err := l.TryLock()
	if err != nil || !ok {
		return err
	}
	defer l.Unlock()
	var d doc
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return os.WriteFile(p, out, 0o644)
}

// NOT SEEN: a lock is not tied to the file it guards, so a lock on an
// unrelated file counts as well (a documented false negative).
func lockOnAnotherFile(p string) error {
	l := flock.New("/tmp/unrelated.lock")
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	var d doc
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return os.WriteFile(p, out, 0o644)
}

func withFlockSameFile(p string) error {
	l := flock.New(p + ".lock")
	if err := l.Lock(); err != nil {
		return err
	}
	defer l.Unlock()
	var d doc
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return os.WriteFile(p, out, 0o644)
}

// The control: the same without the lock.
func withoutLock(p string) error {
	var d doc
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return os.WriteFile(p, out, 0o644) // want `read-modify-write of p without a lock`
}

// A lock released between the read and the write protects nothing.
func unlockedBetween(p string) error {
	l := flock.New(p + ".lock")
	if err := l.Lock(); err != nil {
		return err
	}
	var d doc
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, &d)
	_ = l.Unlock()
	d.Runs++
	out, _ := json.Marshal(d)
	return os.WriteFile(p, out, 0o644) // want `read-modify-write of p without a lock`
}

// lockedfile.Edit: read and rewrite through the locked handle.
func withLockedfile(p string) error {
	f, err := lockedfile.Edit(p)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	var d doc
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(out, 0)
	return err
}

// lockedfile.Read and lockedfile.Write lock twice: the update between them
// is lost.
func twoSessions(p string) error {
	data, err := lockedfile.Read(p)
	if err != nil {
		return err
	}
	var d doc
	_ = json.Unmarshal(data, &d)
	d.Runs++
	out, _ := json.Marshal(d)
	return lockedfile.Write(p, bytesReader(out), 0o644) // want `read-modify-write of p without a lock`
}

// flock(2) on the document's own descriptor.
func withSyscallFlock(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	var d doc
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		return err
	}
	d.Runs++
	out, _ := json.Marshal(d)
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(out, 0)
	return err
}

func withUnixFlock(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	var d doc
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		return err
	}
	d.Runs++
	out, _ := json.Marshal(d)
	_, err = f.WriteAt(out, 0)
	return err
}

// fcntl(2) record lock on the descriptor.
func withFcntl(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLKW, &lk); err != nil {
		return err
	}
	var d doc
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		return err
	}
	d.Runs++
	out, _ := json.Marshal(d)
	_, err = f.WriteAt(out, 0)
	return err
}

// The control of the descriptor locks: the same without flock.
func descriptorWithoutLock(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	var d doc
	if err := json.NewDecoder(f).Decode(&d); err != nil {
		return err
	}
	d.Runs++
	out, _ := json.Marshal(d)
	_, err = f.WriteAt(out, 0) // want `read-modify-write of p without a lock`
	return err
}

type reader struct {
	b []byte
	i int
}

func (r *reader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

func bytesReader(b []byte) io.Reader { return &reader{b: b} }
