// Package linhist records concurrent histories for the porcupine
// linearizability checker.
//
// Several packages of this module check their concurrent behaviour with
// porcupine, and each needs the same harness: client goroutines perform
// operations, every operation's call is stamped just before it runs and its
// return just after it returns, and the stamps come from one logical clock
// shared by all clients, so that the history's real-time order (the one
// linearizability must respect) is the order of the stamps. This package is
// that harness, written once, so that every test records its history the same
// way and a fix to it reaches them all.
//
// A logical clock, not wall time: an atomic counter is strictly increasing
// across goroutines, and one operation's return stamp precedes another's call
// stamp only if the first really returned before the second was called.
//
// What it does NOT do: check anything (that is porcupine's job, with the
// caller's model), recover a panic of an operation, or stamp operations of
// other processes (their stamps would come from another clock).
package linhist

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/anishathalye/porcupine"
)

// A Recorder stamps operations on one logical clock and keeps their history.
// Its zero value is ready to use, and it is safe for concurrent use. Use it
// directly when clients are not alike (say, writers and readers with their
// own loops); Record covers the common case.
type Recorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// Do performs op on behalf of client and records it with input in: the call
// is stamped just before op runs and the return just after it returns, so
// whatever op does (the operation and the reading of its result) lies
// between the two. It returns op's output.
func (r *Recorder) Do(client int, in any, op func() any) any {
	call := r.clock.Add(1)
	out := op()
	ret := r.clock.Add(1)
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	r.mu.Unlock()
	return out
}

// Operations returns a copy of the history recorded so far, in the order the
// operations returned.
func (r *Recorder) Operations() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// Record runs clients goroutines, released together, and returns their
// history. Client c performs ops operations one after another: next(c, i)
// picks the input of its i-th operation (before the call is stamped), and
// do(c, in) performs it. Each operation's call and return are stamped on one
// logical clock shared by all clients; its ClientId is c. Record returns when
// every client is done.
func Record[In, Out any](clients, ops int, next func(client, i int) In, do func(client int, in In) Out) []porcupine.Operation {
	var r Recorder
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range clients {
		wg.Go(func() {
			<-start // all clients begin together: the most overlap
			for i := range ops {
				in := next(c, i)
				r.Do(c, in, func() any { return do(c, in) })
			}
		})
	}
	close(start)
	wg.Wait()
	return r.ops
}
