package core

import "sync"

// Lock returns the in-process mutex called name, creating it on first use.
//
// Every call with the same name on the same Core returns the same *sync.Mutex,
// including the first calls for a name when several goroutines make them at
// once: the mutex is created by an atomic get-or-create, so there is never a
// moment when two callers each hold a "new" mutex for the same name.
//
// Lock does not lock anything by itself; callers lock the returned mutex:
//
//	mu := c.Lock("workspace/" + id)
//	mu.Lock()
//	defer mu.Unlock()
//
// The mutex only excludes goroutines of this process that use the same Core.
// It does not protect files against other processes: status files have their
// own cross-process lock (see package status). Mutexes are never removed, so
// names should come from a bounded set (workspace ids, not request ids).
func (c *Core) Lock(name string) *sync.Mutex {
	return c.locks.get(name)
}

// lockTable hands out one mutex per name.
type lockTable struct {
	m sync.Map // string -> *sync.Mutex

	// afterMiss, if set (tests only), runs between the failed Load and the
	// LoadOrStore, to widen the window in which first callers race.
	afterMiss func()
}

func (t *lockTable) get(name string) *sync.Mutex {
	// The Load fast path avoids allocating a mutex on every call; the
	// LoadOrStore decides the race between first callers: whichever store
	// wins, every caller gets the stored value back, never its own candidate.
	if mu, ok := t.m.Load(name); ok {
		return mu.(*sync.Mutex)
	}
	if t.afterMiss != nil {
		t.afterMiss()
	}
	mu, _ := t.m.LoadOrStore(name, new(sync.Mutex))
	return mu.(*sync.Mutex)
}
