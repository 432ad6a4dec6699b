// Package status keeps small JSON documents — above all the agent workspace
// status.json — safe to read and rewrite from many goroutines and many OS
// processes at once.
//
// [Mutate] replaces the bare read-modify-write pattern (read the file, change
// a field, write it back) that loses updates and reverts states:
//
//	st, err := status.Mutate(ctx, path, func(s *status.Status) error {
//		s.Runs++
//		return s.Transition(status.Running, status.Queued)
//	})
//
// [Load] returns the current document without locking. [Create] stores a
// document only if there is none yet, so that of several creators exactly
// one wins. [Store] does the same for any JSON document type; [Document]
// and [StatusDocument] keep a document as its raw members, for programs that
// change members they do not declare (a CLI, a migration). [MutateAll]
// changes several documents all or nothing. [Transform] and [TransformAll]
// do what Mutate and MutateAll do for a document of any format (YAML,
// TOML, a kubeconfig), which the caller's function decodes and encodes. [List] and [WatchDir] find and
// follow the documents under a root, [Watch] follows one, and [Quarantine]
// moves a corrupt one aside so that work can resume.
//
// Runnable examples show each of these; docs/MIGRATION.md shows whole
// handlers moved to Mutate. Programs in other languages (the Python package
// in the repository's python directory, corestate) share the documents by
// the file protocol of [docs/PROTOCOL.md]: lock files, durable replace,
// removal, transactions and their recovery.
//
// # Guarantees
//
//   - Mutations of one document are serialised across goroutines and, with
//     the file backend, across processes that follow the protocol: every fn
//     sees the document as its predecessor committed it, and no committed
//     change is lost. The history of Mutate and Load calls is linearizable.
//     A process that dies holding the lock (even by SIGKILL) blocks nobody.
//   - When Mutate returns nil, the document it returns is on disk durably
//     (file and directory fsynced). An error that [errors.Is]
//     [fs.ErrDurabilityUnknown] means the new document replaced the old one
//     but might not survive a crash.
//   - Readers need no lock and always see a complete document, old or new:
//     writers replace the file by rename.
//   - If fn returns an error or panics, nothing is written: the error is
//     returned as is, the panic propagates in the caller's goroutine, and the
//     lock is released. If fn changes nothing, nothing is written. This holds
//     for every call that takes a function ([Store.Mutate], [MutateAll]) on
//     every backend.
//   - Corrupt documents: a document that cannot be decoded is never
//     overwritten. Every call that reads it returns a [*CorruptError]
//     (errors.Is [ErrCorrupt]) with the path and byte offset, and fn is not
//     called. So is a document that encoding/json reads differently from
//     Python, jq and corestate, or that a decode and re-encode would change:
//     a name that differs from a declared field's only in case ("Runs" next
//     to "runs"), a name repeated in one object, and invalid UTF-8 or a \u
//     escape of a lone surrogate in a declared field or in any name.
//   - A document is a regular file. A symbolic link, named pipe, device or
//     directory at its path is refused by every entry point without blocking
//     or reading it (errors.Is [fs.ErrNotRegular]), and so is a file larger
//     than [DefaultMaxSize] or [WithMaxSize] ([fs.ErrTooLarge]). The path
//     names the file the kernel would open: "link/../status.json" is the
//     status.json next to the link's target. A path that ends in a
//     separator, "." or ".." is [fs.ErrInvalidName]. A lock file that is
//     not a regular file is refused too, and so is one that another user
//     could replace at will ([ErrLockUntrusted]: [docs/PROTOCOL.md], step
//     1 of Changing one document).
//   - Fields that T does not declare are kept with their value bytes
//     unchanged (one with omitempty disappears when cleared). No Mutate
//     changes bytes its fn did not change other than by the layout of
//     docs/PROTOCOL.md, T's fields in declaration order. A T with both
//     MarshalJSON and UnmarshalJSON owns the whole file instead.
//   - A T whose pointer is a [Stamper] is stamped with the current time (UTC)
//     just before the write when fn changed something else, and only then,
//     and when Create stores it, by every Store: status.Mutate sets UpdatedAt.
//   - Waiting for the lock honours ctx: the call returns an error wrapping
//     ctx.Err() promptly, changing nothing, and at once if ctx is done
//     (a shutdown's last write needs [context.WithoutCancel] and a timeout);
//     there is no other bound (docs/PROTOCOL.md, How long a client waits,
//     has every client's). A caller whose fn ran in a batch waits for that batch's write
//     (etcdstore's leaves at once, saying whether its change may be sent).
//
// # Not guaranteed
//
//   - Only programs that follow [docs/PROTOCOL.md] are excluded: it says
//     what unlocked writers, network file systems, hard links and
//     third-party lockers do.
//   - Load may return a document that is replaced a moment later; to act on
//     a value, decide inside fn.
//   - fn runs under the lock on its caller's goroutine, with every backend,
//     each time a backend runs it (etcd re-runs fn after a conflict): keep it
//     short, with no effect beyond *T. An fn that calls [runtime.Goexit]
//     (t.FailNow) is dropped like a panicking one; if it led the file
//     backend's batch, the whole batch fails, writing nothing.
//   - fn must not call Mutate, Create, Remove, [MutateAll] or [LoadAll] on a
//     document its own call holds (as sync.Mutex is not reentrant): such a
//     call waits for a turn that comes only after fn returns, so it ends
//     when its ctx ends, with ctx's error, having written nothing. It is not
//     detected.
//   - Fairness between processes is best effort ([docs/PROTOCOL.md], Waiting
//     for the lock).
//   - Windows locks with LockFileEx; what its rename and directory syncs do
//     not guarantee is in the [fs] package doc. Systems without flock return
//     [errors.ErrUnsupported]. On systems other than Linux, whose syscall
//     package lacks openat, recovery reaches the files of a directory by
//     path, not through the directory's descriptor ([docs/PROTOCOL.md],
//     What recovery trusts): another user who swaps a link on the way to a
//     directory during a recovery is not kept out there.
//
// # Group commit
//
// Calls on one document in one process (with etcd: through Stores made from
// one etcdstore.With) queue, and are committed in batches of up to 256: one
// read, the queued functions one after another in queue order, each seeing
// its predecessors' result (a failing fn drops only its own change), one
// write. The outcome is that of running the calls one after another, and
// each returns only after the write that holds its change is durable. The
// file backend starts no goroutine: the first caller in the queue leads the
// batch, hands each caller's fn the document to run on its own goroutine,
// and hands the lead on. Durable replaces of different documents on one file
// system at the same moment share their syncs (see [fs.WriteAtomic]).
//
// # Transactions
//
// [MutateAll] commits one function's changes to several documents (Stores of
// any types) all or nothing, so that a registry and its tasks' status files
// keep their shared invariants through crashes; [LoadAll] reads several as
// they were at one moment. [MutateAll2] and [MutateAll3] hand two or three
// documents to their function as typed values; over a longer or varying
// list, [Store.In] types each (Go has no generic methods), and reports a
// Store that is not in the transaction when it is asked for.
//
//   - Each document is presented and stored as Mutate does. When MutateAll
//     returns nil every change is durable. After a crash at any moment, every
//     later caller that takes a lock sees all of a transaction's documents or
//     none: the next locker of a document completes or undoes what a crash
//     left ([ErrTxUntrusted] and [ErrTxConflict] when it cannot safely).
//     Locks are taken in one canonical order, so transactions over
//     overlapping sets never deadlock, in one process or across processes.
//   - Load of several documents, without locks, may return one from before a
//     transaction and another from after it; LoadAll never does.
//   - A transaction queues for each document like a Mutate; calls behind it
//     on documents all among its own join its commit, which costs three
//     shared syncs when it changes two or more.
//   - Not supported: removing a document in a transaction; documents on
//     different backends; two names of one file ([os.ErrInvalid]); paths that
//     are not valid UTF-8 or hold a newline; a document name longer than 247
//     bytes; a commit over the limits of [docs/PROTOCOL.md] (Transactions,
//     Limits), which fails with [ErrTxTooLarge], writing nothing.
//
// The files a commit writes, how recovery decides, what it trusts in a
// directory other users can write, and what an operator does after a
// conflict are in [docs/PROTOCOL.md]. corestate fsck lists what needs an
// operator (package status/txfile); corestate sweep removes journals no longer
// needed (txfile.Sweep).
//
// # Listing and watching documents
//
// [Dir.All] yields every document under a root; [Store.Watch] and
// [Dir.Watch] yield the current state, then each change (a value, a Removed
// [Entry], or an error for an unreadable document, and go on) until the loop
// stops or ctx ends. On files they use inotify on Linux, else, or when
// inotify runs out, poll every 500ms (or 20 times a poll's cost); on etcd
// they follow the key's revisions. Guaranteed:
//
//   - After a change is committed, the watch yields that state or a later
//     one; states committed faster than the loop reads may be coalesced (a
//     watcher that needs each step records it in the document).
//   - Each value is a whole committed version, yielded only when its bytes
//     differ from the last yielded (a touch yields nothing); an unreadable
//     document is reported once per distinct content or error.
//   - Each document's states come in commit order; between documents, in the
//     order noticed. No goroutine is started.
//   - Subdirectories created or moved under a Dir's root are followed; when
//     the watched directory itself is removed or moved, its documents are
//     reported Removed and the sequence ends with [os.ErrNotExist].
//
// Not guaranteed: a file written in place (an editor) may be read
// half-written; polling can miss a same-size replace within one timestamp
// tick until the next change; network file systems do not report other
// machines' writes. Linux allows 128 inotify instances per user by default:
// prefer one WatchDir to many Watch calls.
//
// # Observing, recovering and deleting
//
// [Observer] measures calls; corestate fsck lists corrupt documents, which
// Mutate refuses for ever and [Store.Quarantine] moves aside (no last-good
// copy is kept). To delete a workspace, put its document in a final state,
// stop its writers, [Store.Remove] the document, then remove the directory
// ([docs/PROTOCOL.md], Removing a document, says why this is safe).
//
// [docs/PROTOCOL.md]: https://github.com/agentstate/core/blob/main/docs/PROTOCOL.md
package status
