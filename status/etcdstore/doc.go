// Package etcdstore keeps status documents in etcd instead of local files,
// behind the same [status.Store] contract, so that agents on several hosts can
// share them. Selecting it is one option at construction:
//
//	st := status.NewStore[Doc](path, etcdstore.With(cli, etcdstore.WithRoot("/srv/ws")))
//
// Everything a Store guarantees about decoding, unknown fields, corrupt
// values, fn errors and panics and "no change" is implemented by the Store
// and holds unchanged; the contract suite status/storetest runs against this
// backend in its tests. Store.Remove deletes the key, in order with the
// Updates ([Backend.Remove]); Store.Watch follows the key's revisions and
// yields the same entries as on files ([Backend.Watch]; [Watch] and
// [WatchDir] give the raw values, revisions included). Store.Quarantine,
// which leaves a corrupt document beside the original as a file, is the
// file backend's only: here it returns an error matching
// [status.ErrUnsupported] (read the value with [Watch] or a Get, and
// Remove it or write a good one).
//
// # Keys
//
// A document's key is the prefix (default "/agentstate/status", see
// [WithPrefix]) followed by the document's name, which always starts with
// "/". [Key] returns the key for a path. The mapping is lexical: paths are
// made absolute against the working directory and cleaned, and symbolic
// links are not resolved.
//
// With [WithRoot], the name is the document's path relative to the root, with
// forward slashes: a host that mounts the workspace at /srv/ws and one that
// mounts it at /home/agent/ws (or at C:\ws) both name
// /srv/ws/org/repo/status.json, /home/agent/ws/org/repo/status.json and
// C:\ws\org\repo\status.json "/agentstate/status/org/repo/status.json", so
// they share the document. A path that is not inside the root (the root
// itself included) has no key: every call on it returns an error matching
// [ErrOutsideRoot], and nothing is sent to etcd.
//
// Without a root (the default), the name is the cleaned absolute path with
// forward slashes: "ws/../ws/status.json" run from /home/a becomes
// "/agentstate/status/home/a/ws/status.json", and C:\ws\status.json on
// Windows "/agentstate/status/C:/ws/status.json". Hosts then share a
// document only if they name it by the same absolute path. WithRoot("/")
// gives the same keys on Unix-like systems; any other root changes a
// fleet's keys, so switch its hosts over together, or copy the documents to
// their new keys first.
//
// # Read-modify-write
//
// Update reads the value and its ModRevision with a linearizable read, calls
// apply, and commits with one transaction guarded by "ModRevision(key) ==
// the revision read" (and by "nobody waits for a turn on the key", below).
// Load is a linearizable read.
//
// # Hot keys: turns
//
// In etcd every transaction, also one whose guard fails, is a raft proposal
// written to disk by a quorum, so writers that retry optimistically on one
// key spend most of the cluster's work on losing, and some lose again and
// again. Update therefore contends optimistically only once: when its commit
// loses, or when writers already wait, it takes a turn. It puts an entry in
// the key's queue (keys under prefix+"#turn/", outside every document key),
// attached to its process's turn lease, and waits, watching only the entry
// just ahead of its own, until every older entry is gone or handed over.
// Its commit then hands the turn on in the same transaction, writing the
// committed document into its entry, so that the next writer can commit at
// once, without a read. Writers therefore commit one at a time in the order
// they queued (FIFO by create revision), each with one proposal to queue
// and one to commit; while anyone waits, optimistic commits fail on purpose
// and late arrivals queue behind. A process that has just waited on a key
// queues at once on its next Update of it.
//
// A process's turn lease (TTL 10s by default, [WithTurnTTL]) is renewed by
// its callers while they wait in Update, so a process keeps its turns,
// waiting or held, exactly while its callers wait, and a process that dies
// or is cut off from etcd loses them one TTL later: a dead writer delays
// the writers behind it by at most about the TTL. A batch whose callers
// have all left (their ctx ended) leaves the queue at once. Turns only
// order writers: every
// commit is still guarded by the ModRevision, so a writer that lost its
// turn, a stale read or a program that ignores turns can cost a retry,
// never an update.
//
// # Group commit
//
// Updates of one key through the Stores made from one With do not collide
// in etcd: they queue in the process, and a driver goroutine, alive while
// the key has queued Updates, commits them in batches as the [status]
// package doc describes ("Group commit") — one read, the applies in order, one
// guarded transaction, one marker. The driver runs no apply: it gives each
// caller, waiting in Update, the document to run its apply on, on the
// caller's goroutine, and waits for the result; it does so again for every
// run of the batch, so an apply that runs again after a conflict also runs
// on its caller's goroutine. A batch
// takes one turn when its key is contended, so a process's writers share
// its place in the queue, and when the turn comes the batch also takes the
// Updates of the key queued in the process meanwhile (up to 256 in all).
// On conflict the whole batch runs again on the new
// value. A caller whose ctx ends while queued, or as it is given the
// document, leaves with a plain ctx error; one whose batch may have sent
// its change leaves with an *OutcomeError for that attempt, and the batch
// goes on without it. An apply that calls [runtime.Goexit] ends only its
// caller's goroutine, and the batch goes on without its change.
//
// # Exactly once
//
// A commit whose response is lost (server stopped, connection reset) may or
// may not have been applied. Re-running apply blindly could apply a change
// twice (an increment would count double). Every commit therefore also
// writes a marker key unique to the batch and attempt, attached to a lease
// (default TTL 2 minutes, [WithMarkerTTL]), and is guarded by "marker absent".
// After an ambiguous error Update fences the marker: a transaction puts
// "fenced" if it is still absent, or reads it. "committed" means the change
// was applied and Update returns nil; "fenced" means it was not and never
// will be (its guard now fails), so apply runs again. The caller's last
// apply is thus always the one that committed.
//
// If the fence cannot be completed (ctx ended, client closed, marker lease
// about to expire) Update returns an *OutcomeError that matches
// [ErrOutcomeUnknown] and the underlying cause (e.g. [context.DeadlineExceeded]).
// [Resolve] settles such an outcome later while the marker lives. Every other
// error from Update means nothing was written.
//
// # Transactions
//
// [status.MutateAll] and [status.LoadAll] work on documents of one client
// (UpdateAll): every document and its ModRevision are read at one
// revision, fn runs, and every changed document is written by one etcd
// transaction guarded by each document's ModRevision, with a commit marker
// for an exactly-once outcome as above; it is all or nothing by etcd's
// own atomicity, also when the client dies. A conflict re-runs fn on the
// new documents (fn may run more than once). When the commit loses, or
// writers queue on any document, the transaction takes a turn on every
// document in the order of their keys (the same order in every process,
// so transactions over overlapping sets never wait in a cycle) and hands
// them all on with its commit. LoadAll is one read and takes no turn.
// Documents of different clients, or outside the root, are refused. The
// transaction does not join the in-process batches of its documents. A
// Mutate that fn calls on a document of its own transaction is a side
// effect of fn, which this backend may run again.
//
// # Claims
//
// A claim in a document (package github.com/agentstate/core/status/claim)
// records its owner. On etcd the owner can be a [Lease] rather than a
// process: NewLease grants one and renews it while the process runs, and
// the claims recorded with [Lease.Owner] end with it, one TTL after the
// process dies or is cut off from etcd, whatever its host. claim.Reap with
// claim.WithCheck(LeaseCheck(cli)) then releases them, with the documents
// that count them, in one transaction:
//
//	l, err := etcdstore.NewLease(ctx, cli, 10*time.Second)
//	// ... claims record l.Owner(); stop using them when l.Done() is closed
//	res, err := claim.Reap(ctx, reg, claims, release, claim.WithCheck(etcdstore.LeaseCheck(cli)))
//
// A registry of slots (package github.com/agentstate/core/status/slots) works
// alike: its slots record leases' owners, and slots.Reap and slots.List take
// slots.WithCheck(LeaseCheck(cli)).
//
// # Not guaranteed
//
//   - Turns make a hot key fair and keep it from collapsing, not fast: its
//     writers commit one at a time, about as fast as a single writer (see
//     docs/BENCHMARKS.md). Prefer one key per agent, and one With per
//     process so that a process's writers are group-committed.
//   - A writer whose fn runs while its turn is held keeps the others
//     waiting, as a lock would.
//   - Update's ctx bounds the caller's wait, not etcd's requests, which run
//     under the batch's own context: values carried by the caller's ctx do
//     not reach etcd.
//   - Markers cost storage: one small key per commit, alive for the lease
//     TTL, under prefix+"#txn/". Queue entries reuse a few names per With
//     and key; etcd keeps every revision of them, as of any key, until its
//     history is compacted (configure etcd's auto-compaction).
//   - Keys deleted or rewritten by other programs between a lost response and
//     its fence are fine for exactly-once, but plain Puts by other programs
//     bypass the ModRevision protocol and can lose updates, as an unlocked
//     write to a status file would.
//   - A [Backend] does not own its client: closing the client is the caller's
//     job, and after it every call returns an error wrapping [ErrClosed].
//   - [Watch] reports every change in revision order, but etcd may compact old
//     revisions: a watcher that falls too far behind gets an error (matching
//     rpctypes.ErrCompacted) and must start again.
package etcdstore
