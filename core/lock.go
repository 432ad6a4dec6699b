package core

import "sync"

// Lock returns the in-process mutex called name, creating it on first use.
//
// Every call with the same name on the same [Core] returns the same *sync.Mutex,
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

// lockTable hands out one mutex per name. Its zero value is ready to use.
//
// The lookup and the creation happen in one critical section, so there is no
// window between "missing" and "stored" for a second caller to slip into.
// A map under a Mutex was measured against sync.Map (LoadOrStore) and a
// map under an RWMutex (see BenchmarkLockHit / BenchmarkLockMiss and
// docs/RFC.md, core section): all three are correct; this one was the fastest on
// both paths and allocates least when a name is new.
type lockTable struct {
	mu sync.Mutex
	m  map[string]*sync.Mutex

	// afterMiss, if set (tests only), runs between the failed lookup and the
	// store, to widen the window in which first callers race.
	afterMiss func()
}

func (t *lockTable) get(name string) *sync.Mutex {
	t.mu.Lock()
	defer t.mu.Unlock()
	if mu, ok := t.m[name]; ok {
		return mu
	}
	if t.afterMiss != nil {
		t.afterMiss()
	}
	if t.m == nil {
		t.m = make(map[string]*sync.Mutex)
	}
	mu := new(sync.Mutex)
	t.m[name] = mu
	return mu
}
