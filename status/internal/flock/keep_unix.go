//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package flock

import (
	"sync"
	"syscall"
	"time"
)

// A release keeps its lock file's descriptor, instead of closing it, while
// others hold byte-range locks on the file, whose close would walk them all;
// what a process keeps open, and why, is stated in docs/PROTOCOL.md (Kept
// descriptors). An acquisition takes a kept descriptor out of the list:
// two acquisitions sharing one open file description would both "hold"
// its flock. At most maxKept are kept, each at most keepFor after the
// release that kept it: anyone who may read a lock file can make a release
// keep it, and a kept descriptor holds its file system busy.
const (
	maxKept = 16
	keepFor = time.Second
)

// A kept lock file: its name, descriptor and bell (nil if it had none),
// and when it was kept.
type kept struct {
	name string
	fd   int
	bell *bell
	at   time.Time
}

// keptFiles is the list of kept lock files. Its timer, pending only while
// the list is not empty, closes those kept longer than keepFor; so no
// goroutine outlives the calls, and an idle process holds nothing open for
// longer than keepFor.
var keptFiles struct {
	sync.Mutex
	list  []kept // oldest first
	timer *time.Timer
}

// takeKept returns the descriptor kept last for name, taken from the list,
// if the name still names its file. A kept file that a tool deleted or
// replaced is closed.
func takeKept(name string) (kept, bool) {
	keptFiles.Lock()
	var k kept
	i := len(keptFiles.list) - 1
	for ; i >= 0 && keptFiles.list[i].name != name; i-- {
	}
	if i >= 0 {
		k = keptFiles.list[i]
		if s := TestSeams(); s == nil || !s.shareKept {
			keptFiles.list = append(keptFiles.list[:i], keptFiles.list[i+1:]...)
		}
	}
	keptFiles.Unlock()
	if i < 0 {
		return kept{}, false
	}
	if s := TestSeams(); s != nil && s.noRecheck || names(k.fd, name) {
		return k, true
	}
	k.close()
	return kept{}, false
}

// names reports whether name is the regular file that fd has open.
func names(fd int, name string) bool {
	var byFD, byName syscall.Stat_t
	return syscall.Fstat(fd, &byFD) == nil && syscall.Lstat(name, &byName) == nil &&
		byFD.Mode&syscall.S_IFMT == syscall.S_IFREG && byFD.Dev == byName.Dev && byFD.Ino == byName.Ino
}

// keep adds k to the list, closing the oldest file if the list is full.
func keep(k kept) {
	k.at = time.Now()
	keptFiles.Lock()
	var old []kept
	keptFiles.list = append(keptFiles.list, k)
	if n := len(keptFiles.list) - maxKept; n > 0 {
		old = append(old, keptFiles.list[:n]...)
		keptFiles.list = append(keptFiles.list[:0], keptFiles.list[n:]...)
	}
	if s := TestSeams(); keptFiles.timer == nil && (s == nil || !s.KeepForever) {
		keptFiles.timer = time.AfterFunc(keepFor, expire)
	}
	keptFiles.Unlock()
	for _, o := range old {
		o.close()
	}
}

// expire closes the files kept longer than keepFor, and waits for the next
// one to be due, if any is left.
func expire() {
	now := time.Now()
	keptFiles.Lock()
	n := 0
	for n < len(keptFiles.list) && now.Sub(keptFiles.list[n].at) >= keepFor {
		n++
	}
	old := append([]kept(nil), keptFiles.list[:n]...)
	keptFiles.list = append(keptFiles.list[:0], keptFiles.list[n:]...)
	if len(keptFiles.list) > 0 {
		keptFiles.timer.Reset(keptFiles.list[0].at.Add(keepFor).Sub(now))
	} else {
		keptFiles.timer = nil
	}
	keptFiles.Unlock()
	for _, o := range old {
		o.close()
	}
	if s := TestSeams(); s != nil && s.expired != nil {
		s.expired(len(old))
	}
}

func (k kept) close() {
	closeLock(k.fd)
	if k.bell != nil {
		k.bell.close()
	}
}

// closeLock closes a descriptor of a lock file.
func closeLock(fd int) {
	if s := TestSeams(); s != nil && s.closeLock != nil {
		s.closeLock()
	}
	syscall.Close(fd)
}

// worthKeeping reports whether f's descriptor should be kept after its
// release rather than closed: not that of a deleted file (Remove deletes
// the lock file it holds), whose name can never be its again, and whose
// descriptor would keep its directory's entry busy.
func (f *File) worthKeeping() bool {
	var st syscall.Stat_t
	s := TestSeams()
	switch {
	case f.fd < 0 || s != nil && s.noKeep:
		return false
	case s != nil && s.keepAlways:
		return true
	case syscall.Fstat(f.fd, &st) != nil || st.Nlink == 0:
		return false
	}
	return othersHoldRangeLocks(f.fd)
}
