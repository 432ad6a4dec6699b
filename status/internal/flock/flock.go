// Package flock opens, takes and releases the lock files of package
// status's locking protocol, and waits for a lock that another process
// holds.
//
// What a waiter does, what other processes can and cannot do to it, and
// why, is stated once, in docs/PROTOCOL.md (Waiting for the lock); what a
// process keeps open after a release, and why, in its Kept descriptors.
package flock

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/agentstate/core/internal/ctxtime"
)

// An ID identifies a lock file: device and inode (on Windows, volume and
// file index).
type ID struct{ Dev, Ino uint64 }

// ErrUntrusted is matched by the error of a lock file that another user
// may replace at will, so that its lock would exclude nobody: in a sticky
// directory, one owned by someone other than the document's owner, the
// caller or the directory's owner (docs/PROTOCOL.md, Files).
var ErrUntrusted = errors.New("lock file cannot be trusted")

const (
	// A waiter that sleeps on the lock file's bell tries the lock after
	// each ring and after each timeout; its first timeout is firstSleep
	// (see courtesyWindow for a polite one), later ones the time it has
	// waited so far, at most maxSleep. So it gets a free lock at most
	// maxSleep late, whatever others do.
	firstSleep = 20 * time.Millisecond
	maxSleep   = 200 * time.Millisecond

	// Without a bell a waiter polls, from minPoll up to maxPoll.
	minPoll = 50 * time.Microsecond
	maxPoll = 5 * time.Millisecond

	// A process whose last release of a lock file, at most courtesyWindow
	// ago, woke a waiter lets that waiter have the lock first: its next
	// acquisition sleeps on the bell before it tries, behind the others,
	// and its first timeout is twice as long as its last wait (within
	// firstSleep and maxSleep), so that it does not try again while the
	// others' turns take their usual time: a try at a timeout that finds
	// the lock free (between a release and the woken waiter's try) would
	// take it ahead of them all.
	courtesyWindow = time.Second
)

// A waiter rung this many times in a row without getting the lock (someone
// rings for nothing) ignores the bell until its next timeout.
const maxFalseRings = 4

// Lock takes f's lock, waiting until it is free or ctx ends. On failure f
// is closed.
func (f *File) Lock(ctx context.Context) error {
	start := time.Now()
	f.start = start
	polite, first := courtesy(f.name, start)
	if !polite {
		if ok, err := f.try(); err != nil || ok {
			return f.acquired(err)
		}
	}
	if s := TestSeams(); s == nil || !s.noBell {
		f.bell = f.openBell(true)
	}
	if f.bell == nil {
		return f.poll(ctx, start, polite)
	}
	s := f.bell.sleeper()
	stop := context.AfterFunc(ctx, func() { s.interrupt() })
	defer func() {
		if !stop() {
			s.interrupt() // returns once the call that ctx started has
		}
	}()
	val := f.bell.word()
	falseRings, limit := 0, maxFalseRings
	if t := TestSeams(); t != nil && t.falseRings > 0 {
		limit = t.falseRings
	}
	for d := first; ; d = min(max(time.Since(start), first), maxSleep) {
		w := timedOut
		t := TestSeams()
		if t != nil && t.sleep != nil {
			t.sleep()
		}
		if t != nil && t.noTimeouts {
			d = time.Hour
		}
		if falseRings < limit {
			w = s.sleep(val, d)
			if w == rung && t != nil && t.rung != nil {
				t.rung()
			}
		} else {
			falseRings = 0
			ctxtime.Sleep(ctx, d)
		}
		if err := ctx.Err(); err != nil {
			f.Close()
			return err
		}
		if ok, err := f.try(); err != nil || ok {
			return f.acquired(err)
		}
		switch {
		case w == broken || f.stale():
			// The file was truncated, or tryLock reopened a lock file
			// that a tool deleted and created anew: the bell is the old
			// file's. Poll from now on.
			f.bell.close()
			f.bell = nil
			return f.poll(ctx, start, false)
		case w == rung:
			falseRings++
			val = f.bell.word()
		case w == timedOut:
			falseRings = 0
			s.nextClass()
		}
	}
}

// poll waits for the lock by trying it at a growing interval, for a lock
// file without a bell.
func (f *File) poll(ctx context.Context, start time.Time, polite bool) error {
	d := minPoll
	if polite {
		d = firstSleep
	}
	for {
		if s := TestSeams(); s != nil && s.sleep != nil {
			s.sleep()
		}
		// Full jitter: processes polling the same lock spread out.
		if err := ctxtime.Sleep(ctx, d/2+rand.N(d/2+1)); err != nil {
			f.Close()
			return err
		}
		if ok, err := f.try(); err != nil || ok {
			return f.acquired(err)
		}
		d = min(max(time.Since(start)/2, minPoll), maxPoll)
	}
}

func (f *File) try() (bool, error) {
	if s := TestSeams(); s != nil && s.try != nil {
		s.try()
	}
	return f.tryLock()
}

func (f *File) acquired(err error) error {
	if err != nil {
		f.Close()
		return err
	}
	f.locked = true
	f.waited = time.Since(f.start)
	return nil
}

// Close releases the lock, if f holds it, and the descriptor (which the
// process may keep for a later acquisition: see Kept descriptors). A release
// rings the lock file's bell, if it has one: the process that has waited
// longest wakes.
func (f *File) Close() {
	b := f.bell
	f.bell = nil
	if f.locked && b == nil {
		b = f.openBell(false)
	}
	keeping := f.release()
	if b != nil && f.locked {
		rememberRelease(f.name, b.ring(), f.waited)
	}
	f.locked = false
	if keeping {
		f.keep(b)
	} else if b != nil {
		b.close()
	}
}

// A process remembers, per lock file, when it last released the lock,
// whether that woke a waiter, and how long it had waited for it (see
// courtesyWindow).
var memo struct {
	sync.Mutex
	m map[string]release
}

type release struct {
	at     time.Time
	woke   bool
	waited time.Duration
}

// memoSize bounds memo: entries older than courtesyWindow make room first.
const memoSize = 1024

func rememberRelease(name string, woke bool, waited time.Duration) {
	memo.Lock()
	defer memo.Unlock()
	if memo.m == nil {
		memo.m = map[string]release{}
	}
	if _, ok := memo.m[name]; !ok && len(memo.m) >= memoSize {
		for k, r := range memo.m {
			if time.Since(r.at) > courtesyWindow || len(memo.m) >= memoSize {
				delete(memo.m, k)
			}
		}
	}
	memo.m[name] = release{time.Now(), woke, waited}
}

// courtesy reports whether this process's last release of name woke a
// waiter, at most courtesyWindow before now, and the first timeout of its
// next wait: firstSleep, or for a polite one twice its last wait.
func courtesy(name string, now time.Time) (polite bool, first time.Duration) {
	memo.Lock()
	defer memo.Unlock()
	r, ok := memo.m[name]
	if !ok || !r.woke || now.Sub(r.at) >= courtesyWindow {
		return false, firstSleep
	}
	return true, min(max(2*r.waited, firstSleep), maxSleep)
}
