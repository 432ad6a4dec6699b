package status

import (
	"errors"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// ErrNested is matched ([errors.Is]) by the error of a [Mutate], [Create],
// [Remove], [MutateAll] or [LoadAll] that the function of another call runs, in
// the same goroutine, on a document that call holds: it would wait for
// its own caller's lock forever (or until its ctx ended). Nothing is
// changed; the outer function may go on. The file backend finds such
// calls; the package doc (Not guaranteed) lists those it cannot find.
var ErrNested = errors.New("nested call on a document its caller holds")

// Nested calls are found without goroutine identities, which Go does not
// expose: every function a caller passes runs at the bottom of a chain of
// k+1 frames of descend (its apply is called by the last), k being a slot that records the entries its call
// holds. A call that finds a function running on its entry reads its own
// stack (runtime.Callers): a chain of depth k+1 on it means that it runs
// inside the function of slot k, so if that slot holds the entry, it is
// nested. Calls from other goroutines have no such chain and wait as usual.
// Only the calls that arrive while a function runs on their entry read
// their stack; a function that runs when every slot is taken is not
// tracked (nesting inside it is not found).

// detectNested and joinTxs are false only in the benchmark that measures
// what nested-call detection and transaction joining cost and gain.
var detectNested, joinTxs = true, true

// fnSlots bounds the number of functions tracked at once.
const fnSlots = 64

var fnRuns struct {
	mu   sync.Mutex
	used uint64            // bit k: slot k is taken
	held [fnSlots][]*entry // the entries whose turn slot k's call holds
}

// runTracked runs r's apply on cur, as the function of a call that holds
// the turns of r.held, so that a nested call can find it.
func runTracked(r *request, cur []byte) ([]byte, error) {
	if !detectNested {
		return r.apply(cur)
	}
	fnRuns.mu.Lock()
	k := bits.TrailingZeros64(^fnRuns.used)
	if k == fnSlots {
		fnRuns.mu.Unlock()
		return r.apply(cur)
	}
	fnRuns.used |= 1 << k
	fnRuns.held[k] = r.held
	fnRuns.mu.Unlock()
	for _, e := range r.held {
		e.fns.Add(1)
	}
	defer func() {
		for _, e := range r.held {
			e.fns.Add(-1)
		}
		fnRuns.mu.Lock()
		fnRuns.used &^= 1 << k
		fnRuns.held[k] = nil
		fnRuns.mu.Unlock()
	}()
	return descend(k, r, cur)
}

// descend calls r's apply below k more frames of itself.
//
//go:noinline
func descend(k int, r *request, cur []byte) ([]byte, error) {
	if k > 0 {
		out, err := descend(k-1, r, cur)
		return out, err
	}
	return r.apply(cur)
}

// descendPCs are the return addresses in descend's frames: [0] in the
// frame that calls the apply, [1] in a frame that calls descend.
var descendPCs = sync.OnceValue(func() [2]uintptr {
	var pcs [2]uintptr
	probe := &request{apply: func([]byte) ([]byte, error) {
		runtime.Callers(2, pcs[:])
		return nil, nil
	}}
	descend(1, probe, nil)
	return pcs
})

// nested reports whether the calling goroutine runs, further up its
// stack, the function of a call that holds e's turn.
func nested(e *entry) bool {
	if !detectNested || e.fns.Load() == 0 {
		return false
	}
	pcF, pcR := descendPCs()[0], descendPCs()[1]
	var buf [512]uintptr
	pcs := buf[:runtime.Callers(2, buf[:])]
	for i := 0; i < len(pcs); i++ {
		if pcs[i] != pcF {
			continue
		}
		k := 0
		for i+1 < len(pcs) && pcs[i+1] == pcR {
			i++
			k++
		}
		if k < fnSlots && holds(k, e) {
			return true
		}
	}
	return false
}

func holds(k int, e *entry) bool {
	fnRuns.mu.Lock()
	defer fnRuns.mu.Unlock()
	return fnRuns.used&(1<<k) != 0 && slices.Contains(fnRuns.held[k], e)
}

// fnCount is the number of functions running on an entry's turn (see
// runTracked); only when it is not zero may a call on the entry be nested.
type fnCount = atomic.Int32
