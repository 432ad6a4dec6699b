package flock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/internal/flock"
)

// removeEnv makes the test binary a process that removes the document it
// names with status.Remove, and exits.
const removeEnv = "FLOCK_TEST_REMOVE"

func init() {
	if path, ok := os.LookupEnv(removeEnv); ok {
		if err := status.Remove(context.Background(), path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// TestRemoveThenMutate: next to another's byte-range lock on a document's
// lock file (so releases keep their descriptors), status.Remove deletes
// the document and its lock file while it holds the lock, in this process
// or in another one; the next Mutate here must lock the new lock file,
// which a process that starts now opens. Checked from inside the Mutate: a
// fresh descriptor's flock on the lock file's name must find it taken.
// Here, the release after the removal keeps nothing (the file is deleted);
// in another process, the descriptor kept here is stale and the identity
// checks replace it. The CONTROL keeps every descriptor and skips the
// identity checks: Mutate holds the deleted file's lock.
func TestRemoveThenMutate(t *testing.T) {
	for _, where := range []string{"here", "another_process"} {
		for _, control := range []bool{false, true} {
			t.Run(where+map[bool]string{false: "", true: "/CONTROL_no_recheck"}[control], func(t *testing.T) {
				s := flock.TestSeams()
				if s == nil {
					t.Skip("needs the test switches: go test -tags crashhooks")
				}
				setFlag(t, s.NoRecheck(), control)
				setFlag(t, s.KeepAlways(), control)
				setFlag(t, &s.KeepForever, control)
				t.Cleanup(flock.CloseKept)
				path := filepath.Join(t.TempDir(), "status.json")
				lock := path + status.LockSuffix
				bump := func(s *status.Status) error { s.Runs++; return nil }
				if _, err := status.Mutate(t.Context(), path, bump); err != nil {
					t.Fatal(err)
				}
				rangeLock(t, lock)
				if _, err := status.Mutate(t.Context(), path, bump); err != nil { // keeps its descriptor
					t.Fatal(err)
				}
				if where == "here" {
					if err := status.Remove(context.Background(), path); err != nil {
						t.Fatal(err)
					}
				} else {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), removeEnv+"="+path)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("status.Remove in another process: %v: %s", err, out)
					}
				}
				if _, err := os.Lstat(lock); !os.IsNotExist(err) {
					t.Fatalf("Remove left the lock file: %v", err)
				}
				var newLocked bool
				if _, err := status.Mutate(t.Context(), path, func(s *status.Status) error {
					// No file at the name (the CONTROL): a process that
					// starts now creates one and locks it at once.
					fd, err := syscall.Open(lock, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
					if err == syscall.ENOENT {
						return bump(s)
					}
					if err != nil {
						return err
					}
					defer syscall.Close(fd)
					newLocked = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == syscall.EWOULDBLOCK
					return bump(s)
				}); err != nil {
					t.Fatal(err)
				}
				switch {
				case !control && !newLocked:
					t.Fatal("after Remove, Mutate held the deleted lock file's lock, not the new file's")
				case control && newLocked:
					t.Fatal("CONTROL: Mutate locked the new file all the same: the harness cannot see a kept descriptor of a removed lock file")
				case control:
					t.Log("CONTROL: Mutate held the removed lock file's lock; the name was free")
				}
			})
		}
	}
}

func setFlag(t *testing.T, p *bool, v bool) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// rangeLock takes an OFD read lock on name through a descriptor of the
// test's own, as another process's marks would be.
func rangeLock(t *testing.T, name string) {
	t.Helper()
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	lk := syscall.Flock_t{Type: syscall.F_RDLCK, Start: 1 << 40, Len: 1}
	if err := syscall.FcntlFlock(uintptr(fd), 37 /* F_OFD_SETLK */, &lk); err != nil {
		t.Fatal(err)
	}
}
