// Package etcdstore keeps status documents in etcd instead of local files,
// behind the same status.Store contract, so that agents on several hosts can
// share them. Selecting it is one option at construction:
//
//	st := status.NewStore[Doc](path, etcdstore.With(cli))
//
// Everything a Store guarantees about decoding, unknown fields, corrupt
// values, fn errors and panics and "no change" is implemented by the Store
// and holds unchanged; the contract suite status/storetest runs against this
// backend in its tests.
//
// # Keys
//
// A document's key is the prefix (default "/agentstate/status", see
// WithPrefix) followed by the cleaned absolute path of the document with
// forward slashes, always starting with "/": on this host the path
// "ws/../ws/status.json" run from /home/a becomes the key
// "/agentstate/status/home/a/ws/status.json"; on Windows C:\ws\status.json
// becomes "/agentstate/status/C:/ws/status.json". Hosts share a document
// only if they name it by the same absolute path (or agree on a prefix per
// host that makes the keys meet). Key returns the key for a path.
//
// # Read-modify-write
//
// Update reads the value and its ModRevision with a linearizable Get, calls
// apply, and commits with one transaction guarded by "ModRevision(key) ==
// the revision read". On a conflict the transaction's else branch returns
// the current value, so the retry costs no extra read; retries back off
// exponentially with full jitter until ctx ends. Load is a linearizable Get.
//
// # Group commit
//
// Updates of one key through the Stores made from one With do not collide
// in etcd (where every losing transaction still costs a raft round trip):
// they queue in the process, and a driver goroutine, alive while the key has
// queued Updates, commits them in batches of up to 256 — one read, the
// applies in order (each sees its predecessors' result; a failing or
// panicking apply drops only its own change, and the panic is re-raised in
// its caller's goroutine), one guarded transaction, one marker. On conflict
// the whole batch runs again on the new value. A caller whose ctx ends while
// queued leaves with a plain ctx error; one whose batch may have sent its
// change leaves with an *OutcomeError for that attempt, and the batch goes on
// without it. Writers in other processes or on other hosts meet only in the
// guarded transaction.
//
// # Exactly once
//
// A commit whose response is lost (server stopped, connection reset) may or
// may not have been applied. Re-running apply blindly could apply a change
// twice (an increment would count double). Every commit therefore also
// writes a marker key unique to the batch and attempt, attached to a lease
// (default TTL 2 minutes, WithMarkerTTL), and is guarded by "marker absent".
// After an ambiguous error Update fences the marker: a transaction puts
// "fenced" if it is still absent, or reads it. "committed" means the change
// was applied and Update returns nil; "fenced" means it was not and never
// will be (its guard now fails), so apply runs again. The caller's last
// apply is thus always the one that committed.
//
// If the fence cannot be completed (ctx ended, client closed, marker lease
// about to expire) Update returns an *OutcomeError that matches
// ErrOutcomeUnknown and the underlying cause (e.g. context.DeadlineExceeded).
// Resolve settles such an outcome later while the marker lives. Every other
// error from Update means nothing was written.
//
// # Not guaranteed
//
//   - Many independent writers on one hot key contend optimistically:
//     throughput falls and latency grows with their number. Prefer one key
//     per agent, and one With per process.
//   - Update's ctx bounds the caller's wait, not etcd's requests, which run
//     under the batch's own context: values carried by the caller's ctx do
//     not reach etcd.
//   - Markers cost storage: one small key per commit, alive for the lease
//     TTL. They are stored under prefix+"#txn/", outside every document key.
//   - Keys deleted or rewritten by other programs between a lost response and
//     its fence are fine for exactly-once, but plain Puts by other programs
//     bypass the ModRevision protocol and can lose updates, as an unlocked
//     write to a status file would.
//   - A Backend does not own its client: closing the client is the caller's
//     job, and after it every call returns an error wrapping ErrClosed.
//   - Watch reports every change in revision order, but etcd may compact old
//     revisions: a watcher that falls too far behind gets an error (matching
//     rpctypes.ErrCompacted) and must start again.
package etcdstore
