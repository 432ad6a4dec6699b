package config

import (
	"reflect"
	"slices"
	"sync/atomic"
)

// A Change describes one published write, as seen by one subscriber.
type Change struct {
	// Keys are the changed keys, sorted. For a subscriber that named keys,
	// these are the named keys whose value (as Get would return it)
	// changed; a named section changes when anything under it does. For a
	// subscriber of all keys, these are the changed keys in the form Keys
	// lists them (leaves and empty sections).
	Keys []string
	// Old and New are the snapshots before and after the write. They are
	// immutable; read the old and new values from them.
	Old, New *Snapshot
}

type subscription struct {
	fn        func(Change)
	keys      []string // nil: every key
	cancelled atomic.Bool
}

type change struct{ old, new *Snapshot }

// OnChange calls fn after every write (Set, Delete, Load) that changes the
// value of one of keys, or of any key if none are given. A write that
// stores a value equal to the current one (reflect.DeepEqual) changes
// nothing and calls nothing. fn gets exactly one call per
// write that changed its keys.
//
// Delivery: fn runs with no lock held, synchronously, in a writer's
// goroutine; OnChange starts no goroutine. Changes are delivered in the
// order they were published, one at a time: calls of fn never overlap. A
// writer delivers its own change before its Set returns, unless another
// goroutine is already delivering: that goroutine then delivers it too
// (after the changes published before it) and this writer returns at once.
// So fn may call Set, Delete or cancel without deadlock; such a nested
// write is delivered after fn returns. A slow fn delays the writer that is
// delivering, not readers. If fn panics, the panic reaches the writer that
// was delivering, and changes still queued are delivered by the next write.
//
// cancel removes the subscription; it is idempotent and safe to call from
// any goroutine, fn included. A delivery that starts after cancel has
// returned does not call fn; a delivery already under way in another
// goroutine may still make its one call. A subscription
// made while changes are queued may receive those changes.
func (c *Config) OnChange(fn func(Change), keys ...string) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	sub := &subscription{fn: fn}
	if len(keys) > 0 {
		sub.keys = slices.Clone(keys)
		slices.Sort(sub.keys)
		sub.keys = slices.Compact(sub.keys)
	}
	c.mu.Lock()
	c.subs = append(slices.Clip(c.subs), sub)
	c.mu.Unlock()
	return func() {
		if sub.cancelled.Swap(true) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.subs, sub)
		if i >= 0 {
			// A new slice: a deliverer may be ranging over the old one.
			c.subs = slices.Delete(slices.Clone(c.subs), i, i+1)
		}
	}
}

// publishLocked makes s current and queues the change for subscribers.
// c.mu must be held.
func (c *Config) publishLocked(old, s *Snapshot) {
	c.cur.Store(s)
	if len(c.subs) > 0 {
		c.queue = append(c.queue, change{old, s})
	}
}

// unlockAndDeliver releases c.mu, after delivering queued changes if no
// other goroutine is doing so. Callbacks run with c.mu released.
func (c *Config) unlockAndDeliver() {
	if c.draining || len(c.queue) == 0 {
		c.mu.Unlock()
		return
	}
	c.draining = true
	done := false
	defer func() {
		if !done { // a callback panicked: let the next writer deliver the rest
			c.mu.Lock()
			c.draining = false
			c.mu.Unlock()
		}
	}()
	for len(c.queue) > 0 {
		ch := c.queue[0]
		c.queue[0] = change{}
		c.queue = c.queue[1:]
		subs := c.subs
		c.mu.Unlock()
		deliver(ch, subs)
		c.mu.Lock()
	}
	c.queue = nil
	c.draining = false
	done = true
	c.mu.Unlock()
}

func deliver(ch change, subs []*subscription) {
	var all []string // changed listed keys, computed once if someone needs them
	allDone := false
	for _, sub := range subs {
		if sub.cancelled.Load() {
			continue
		}
		var keys []string
		if sub.keys == nil {
			if !allDone {
				all, allDone = changedKeys(ch.old, ch.new), true
			}
			keys = slices.Clone(all)
		} else {
			for _, k := range sub.keys {
				ov, oldOK := ch.old.flat[k]
				nv, newOK := ch.new.flat[k]
				if oldOK != newOK || oldOK && !reflect.DeepEqual(ov, nv) {
					keys = append(keys, k)
				}
			}
		}
		if len(keys) > 0 {
			sub.fn(Change{Keys: keys, Old: ch.old, New: ch.new})
		}
	}
}

// changedKeys returns, sorted, the keys in the form Keys lists them whose
// value differs between old and new.
func changedKeys(old, new *Snapshot) []string {
	var keys []string
	for k, ov := range old.flat {
		if !listed(ov) {
			continue
		}
		nv, ok := new.flat[k]
		if !ok || !listed(nv) || !reflect.DeepEqual(ov, nv) {
			keys = append(keys, k)
		}
	}
	for k, nv := range new.flat {
		if !listed(nv) {
			continue
		}
		if ov, ok := old.flat[k]; !ok || !listed(ov) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
