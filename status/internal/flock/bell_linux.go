package flock

import (
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// A bell is a shared mapping of the lock file's first page, whose first
// four bytes are a futex word: waiters sleep on it and a releaser rings it
// (FUTEX_WAKE of one sleeper). The kernel keys the futex of a shared file
// mapping by inode and offset, so every process that maps the lock file
// sleeps in one queue, and it wakes the sleeper that has slept longest.
//
// Nobody writes the word. A release between a waiter's failed try and its
// sleep is missed; that waiter sleeps until its own timeout.
type bell struct {
	mem []byte
	fd  int // the descriptor mapped, for reading the word without touching mem
}

// bellSize is what a bell needs of the lock file: its first page must
// exist, so the file must not be empty.
const bellSize = 4

// openBell maps f's lock file. grow first extends an empty lock file to
// bellSize zero bytes (a waiter does; a releaser rings only a bell that a
// waiter made). It returns nil when the file is empty (and grow is false or
// not permitted) or cannot be mapped.
//
// The mapping is made through a descriptor of its own: a mapping holds on
// to the open file description it was made from, and the flock belongs to
// the lock's, which must be released by its close.
func (f *File) openBell(grow bool) *bell {
	f.bellFD = f.fd
	if b := f.kept; b != nil {
		f.kept = nil
		return b // mapped when the file was kept, and not empty then
	}
	var st, bst syscall.Stat_t
	if syscall.Fstat(f.fd, &st) != nil {
		return nil
	}
	if st.Size == 0 && (!grow || syscall.Ftruncate(f.fd, bellSize) != nil) {
		return nil
	}
	fd, err := open(f.name, syscall.O_RDONLY|lockFlags, 0)
	if err != nil {
		return nil
	}
	if syscall.Fstat(fd, &bst) != nil || bst.Dev != st.Dev || bst.Ino != st.Ino {
		syscall.Close(fd)
		return nil
	}
	mem, err := syscall.Mmap(fd, 0, bellSize, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		syscall.Close(fd)
		return nil
	}
	return &bell{mem: mem, fd: fd}
}

// Futex operations (the syscall package lacks the names).
const (
	futexWaitBitset = 9
	futexWakeBitset = 10
	futexBitsetAny  = 0xffffffff
	clockMonotonic  = 1
	maxWake         = 1<<31 - 1
)

// A sleeper's bitset is a random one of the low interruptBits bits, which
// interrupt wakes, and the bit of its class: how many of its timeouts
// have passed, at most classes-1. A ring wakes the sleeper that went to
// sleep first in the highest class that has one. Each timeout takes a
// waiter out of the kernel's queue, and its next sleep puts it back at the
// end; but in the next class, where the waiters who came before it are
// ahead of it and those who came after it not yet there: the timeouts of
// every waiter follow one schedule from the start of its wait. So the
// queue stays in the order in which the waiters came.
const (
	interruptBits = 24
	classes       = 8
)

func (b *bell) futex(op int, val uint32, ts *syscall.Timespec, bits uint32) syscall.Errno {
	_, _, e := syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&b.mem[0])), uintptr(op),
		uintptr(val), uintptr(unsafe.Pointer(ts)), 0, uintptr(bits))
	return e
}

// word reads the futex word with pread: a read through the mapping would
// crash the process if another truncated the file meanwhile.
func (b *bell) word() uint32 {
	var buf [bellSize]byte
	syscall.Pread(b.fd, buf[:], 0)
	return binary.NativeEndian.Uint32(buf[:])
}

// ring wakes one sleeper: of the highest class that has one, the one
// that went to sleep first (see interruptBits); or else the first of those
// that sleep without a class (other programs'). It reports whether there
// was one.
func (b *bell) ring() bool {
	for c := classes - 1; c >= 0; c-- {
		if b.wake(1 << (interruptBits + c)) {
			return true
		}
	}
	return b.wake(futexBitsetAny)
}

// wake wakes the first sleeper that has one of bits.
func (b *bell) wake(bits uint32) bool {
	r, _, e := syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(&b.mem[0])), futexWakeBitset,
		1, 0, 0, uintptr(bits))
	return e == 0 && r > 0
}

func (b *bell) close() {
	syscall.Munmap(b.mem)
	closeLock(b.fd)
}

// A sleeper is one waiter's sleeps on a bell, which another goroutine can
// interrupt (its ctx ended).
type sleeper struct {
	b           *bell
	bit         uint32 // interrupt wakes only the sleepers that have this bit
	class       int    // the waiter's timeouts so far (see interruptBits)
	asleep      atomic.Bool
	interrupted atomic.Bool
}

func (b *bell) sleeper() *sleeper { return &sleeper{b: b, bit: 1 << rand.N(interruptBits)} }

// nextClass moves the sleeper to the class of one more timeout.
func (s *sleeper) nextClass() { s.class = min(s.class+1, classes-1) }

// The outcomes of a sleep.
type woken int

const (
	timedOut woken = iota
	rung           // the bell rang, or its word is no longer the value slept on
	broken         // the bell cannot be used (the file was truncated): poll
)

// sleep sleeps until the bell rings, d passes or interrupt is called, unless
// the word is no longer val.
func (s *sleeper) sleep(val uint32, d time.Duration) woken {
	s.asleep.Store(true)
	defer s.asleep.Store(false)
	if s.interrupted.Load() {
		return timedOut
	}
	// FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time, which the
	// kernel reads in the caller's time namespace, as clock_gettime does.
	var now syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&now)), 0); e != 0 {
		return broken
	}
	deadline := syscall.NsecToTimespec(now.Nano() + int64(d))
	switch e := s.b.futex(futexWaitBitset, val, &deadline, s.bit|1<<(interruptBits+s.class)); {
	case s.interrupted.Load(), e == syscall.ETIMEDOUT, e == syscall.EINTR:
		return timedOut
	case e == 0, e == syscall.EAGAIN:
		return rung
	}
	return broken
}

// interrupt ends the current sleep and every later one. A sleeper that has
// announced its sleep but not yet entered the kernel is woken again until
// it has left, so the wake cannot be lost.
func (s *sleeper) interrupt() {
	s.interrupted.Store(true)
	for s.asleep.Load() {
		// Sleepers of other processes that share the bit wake too; they
		// try the lock and sleep again.
		s.b.futex(futexWakeBitset, maxWake, nil, s.bit)
		time.Sleep(20 * time.Microsecond)
	}
}

// stale reports whether tryLock reopened the lock file since the bell was
// mapped.
func (f *File) stale() bool { return f.fd != f.bellFD }
