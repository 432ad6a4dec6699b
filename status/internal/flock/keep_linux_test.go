package flock

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// holdRangeLock takes an OFD read lock on name through a descriptor of
// the test's own, as another process's marks would be: a byte-range lock
// of another open file description, which makes releases keep their
// descriptors.
func holdRangeLock(t *testing.T, name string) {
	t.Helper()
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	lk := syscall.Flock_t{Type: syscall.F_RDLCK, Start: 1 << 40, Len: 1}
	if err := fcntlLock(fd, fOFDSetlk, &lk); err != nil {
		t.Fatal(err)
	}
}

// keptFor counts the descriptors kept for name.
func keptFor(name string) int {
	keptFiles.Lock()
	defer keptFiles.Unlock()
	n := 0
	for _, k := range keptFiles.list {
		if k.name == name {
			n++
		}
	}
	return n
}

// dropKept closes every kept descriptor when the test ends, and until then
// keeps them without a time bound (in builds with crashhooks), so that a
// slow machine cannot make one expire between two steps of a test.
func dropKept(t *testing.T) {
	setSeam(t, &seamsFor(t).KeepForever, true)
	// A timer an earlier test armed would fire during this one and read
	// the seams it sets (a race report): stop it, and start from nothing
	// kept.
	keptFiles.Lock()
	if keptFiles.timer != nil {
		keptFiles.timer.Stop()
		keptFiles.timer = nil
	}
	keptFiles.Unlock()
	closeKept()
	t.Cleanup(closeKept)
}

// closeKept closes every kept descriptor, once each (the sharing CONTROL
// lists one several times).
func closeKept() {
	keptFiles.Lock()
	list := keptFiles.list
	keptFiles.list = nil
	keptFiles.Unlock()
	closed := map[int]bool{}
	for _, k := range list {
		if !closed[k.fd] {
			closed[k.fd] = true
			k.close()
		}
	}
}

// expireAll closes every kept descriptor as the timer does once keepFor has
// passed since its release.
func expireAll() {
	keptFiles.Lock()
	for i := range keptFiles.list {
		keptFiles.list[i].at = time.Time{}
	}
	if keptFiles.timer == nil {
		keptFiles.timer = time.NewTimer(time.Hour) // expire resets or drops it
	}
	keptFiles.Unlock()
	expire()
}

// lockFree takes name's lock, failing the test if it is busy.
func lockFree(t *testing.T, name string) *File {
	t.Helper()
	f, err := lockWith(t.Context(), name, false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestKeptNotShared: goroutine A holds the lock through the descriptor a
// release kept; goroutine B, of the same process, asks for it and must
// find it busy (asked with a context already ended, Lock tries once and
// returns). The CONTROL hands the kept descriptor to both: a second flock
// on one open file description "succeeds", and both hold the lock.
func TestKeptNotShared(t *testing.T) {
	for _, share := range []bool{false, true} {
		t.Run(map[bool]string{false: "checkout", true: "CONTROL_shared"}[share], func(t *testing.T) {
			dropKept(t)
			setSeam(t, &seamsFor(t).shareKept, share)
			name := lockName(t)
			holdRangeLock(t, name)
			lockFree(t, name).Close()
			if keptFor(name) != 1 {
				t.Fatal("the release kept no descriptor: the harness cannot see sharing")
			}
			held, done := make(chan *File), make(chan bool)
			go func() {
				f, err := lockWith(context.Background(), name, false)
				if err != nil {
					close(held)
					return
				}
				held <- f
				<-done
				f.Close()
				close(held)
			}()
			a, ok := <-held
			if !ok {
				t.Fatal("goroutine A did not get the free lock")
			}
			ended, cancel := context.WithCancel(context.Background())
			cancel()
			b, err := lockWith(ended, name, false)
			done <- true
			<-held
			if b != nil {
				b.Close()
			}
			switch {
			case !share && err == nil:
				t.Fatalf("two goroutines held the lock at once (descriptors %d and %d)", a.fd, b.fd)
			case share && err != nil:
				t.Fatalf("CONTROL: sharing the kept descriptor kept the second goroutine out (%v): the harness cannot see sharing", err)
			case share:
				t.Log("CONTROL: both goroutines held the lock, through one descriptor")
			}
		})
	}
}

// TestKeptFileReplaced: another process deletes the lock file and creates
// a new one after a release kept the old file's descriptor, either between
// two acquisitions or while the next one is under way (after its checkout
// passed, before its flock). The next acquisition must lock the new file:
// a lock on the old one excludes nobody who opens the name now. The
// CONTROL skips the identity checks and locks the old file.
func TestKeptFileReplaced(t *testing.T) {
	for _, during := range []bool{false, true} {
		for _, recheck := range []bool{true, false} {
			when := map[bool]string{false: "between", true: "during"}[during]
			t.Run(when+map[bool]string{true: "", false: "/CONTROL_no_recheck"}[recheck], func(t *testing.T) {
				dropKept(t)
				setSeam(t, &seamsFor(t).noRecheck, !recheck)
				name := lockName(t)
				holdRangeLock(t, name)
				lockFree(t, name).Close()
				if keptFor(name) != 1 {
					t.Fatal("the release kept no descriptor")
				}
				replace := func() {
					out, err := exec.Command("sh", "-c", `rm -- "$1" && : > "$1"`, "sh", name).CombinedOutput()
					if err != nil {
						t.Fatalf("replacing the lock file: %v: %s", err, out)
					}
				}
				if during {
					replaced := false
					hook(t, &seamsFor(t).try, func() {
						if !replaced {
							replaced = true
							replace()
						}
					})
				} else {
					replace()
				}
				f := lockFree(t, name)
				defer f.Close()
				// Is the file that the name names now locked?
				fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer syscall.Close(fd)
				newLocked := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == syscall.EWOULDBLOCK
				switch {
				case recheck && !newLocked:
					t.Fatal("the acquisition locked the deleted lock file, not the new one")
				case !recheck && newLocked:
					t.Fatal("CONTROL: without the identity checks the new file was locked all the same: the harness cannot see a stale descriptor")
				case !recheck:
					t.Log("CONTROL: the deleted file was locked; the new one was free")
				}
			})
		}
	}
}

// TestKeptClosesNone counts the closes of lock files' descriptors in 50
// uncontended acquisitions and releases. Next to another's byte-range lock,
// whose walk makes each close costly, the first release keeps its
// descriptor and no acquisition closes one; without such locks every
// release closes as before, and nothing stays open. CONTROLs: keeping
// switched off closes 50 next to the lock; keeping forced keeps the
// descriptor of a file without one.
func TestKeptClosesNone(t *testing.T) {
	const n = 50
	for _, c := range []struct {
		name                 string
		rangeLock            bool
		noKeep, keepAlways   bool
		wantCloses, wantKept int
	}{
		{"range_lock", true, false, false, 0, 1},
		{"range_lock/CONTROL_no_keep", true, true, false, n, 0},
		{"no_range_lock", false, false, false, n, 0},
		{"no_range_lock/CONTROL_keep_always", false, false, true, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dropKept(t)
			setSeam(t, &seamsFor(t).noKeep, c.noKeep)
			setSeam(t, &seamsFor(t).keepAlways, c.keepAlways)
			name := lockName(t)
			if err := os.WriteFile(name, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if c.rangeLock {
				holdRangeLock(t, name)
			}
			var closes atomic.Int64
			hook(t, &seamsFor(t).closeLock, func() { closes.Add(1) })
			for range n {
				lockFree(t, name).Close()
			}
			got, kept := int(closes.Load()), keptFor(name)
			if got != c.wantCloses || kept != c.wantKept {
				t.Fatalf("%d acquisitions closed %d lock descriptors and kept %d; want %d and %d", n, got, kept, c.wantCloses, c.wantKept)
			}
		})
	}
}

// TestKeptBellSameFile: a waiter made the lock file's bell; the releases
// keep the bell with the descriptor, and in the next round the holder's
// release rings through the kept bell and wakes the waiter (a ring, not
// its timeout: the rung hook counts).
func TestKeptBellSameFile(t *testing.T) {
	dropKept(t)
	name := lockName(t)
	holdRangeLock(t, name)
	for round := range 2 {
		holder := lockFree(t, name)
		var slept, rungs atomic.Int64
		hook(t, &seamsFor(t).sleep, func() { slept.Add(1) })
		hook(t, &seamsFor(t).rung, func() { rungs.Add(1) })
		got := lockAsync(t, t.Context(), name, false)
		waitFor(t, "the waiter sleeps on the bell", func() bool { return slept.Load() > 0 && bellSleepers(os.Getpid()) == 1 })
		holder.Close()
		if err := <-got; err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if rungs.Load() == 0 {
			t.Fatalf("round %d: the release did not ring the waiter awake", round)
		}
	}
	keptFiles.Lock()
	defer keptFiles.Unlock()
	for _, k := range keptFiles.list {
		if k.name == name && k.bell == nil {
			t.Error("a descriptor of a file with a bell was kept without it")
		}
	}
}

// TestNoMountPinned: a process that locked a file on a file system and
// released it keeps nothing open there (the file carries no byte-range
// lock), so the file system can be unmounted. The CONTROL keeps every
// released descriptor: the unmount fails with EBUSY.
func TestNoMountPinned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	for _, always := range []bool{false, true} {
		t.Run(map[bool]string{false: "keep_if_costly", true: "CONTROL_keep_always"}[always], func(t *testing.T) {
			dropKept(t)
			setSeam(t, &seamsFor(t).keepAlways, always)
			mnt := t.TempDir()
			if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
				t.Skip("cannot mount a tmpfs here:", err)
			}
			mounted := true
			t.Cleanup(func() {
				if mounted {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
				}
			})
			lockFree(t, filepath.Join(mnt, "status.json.lock")).Close()
			err := syscall.Unmount(mnt, 0)
			mounted = err != nil
			switch {
			case !always && err != nil:
				t.Fatalf("unmount after a release: %v", err)
			case always && err == nil:
				t.Fatal("CONTROL: unmounted although a descriptor was kept: the harness cannot see a pinned mount")
			case always:
				t.Logf("CONTROL: %v", err)
			}
		})
	}
}
