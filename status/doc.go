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
// document only if there is none yet (otherwise its error matches
// [os.ErrExist]), so that of several creators exactly one wins. [Store]
// does the same for any JSON document type: with the type [Document] it
// keeps any JSON object as its raw members, and with [StatusDocument] a
// status document, under Status's rules, for programs that change members
// [Status] does not declare (a CLI, a migration); [Store.LoadExisting]
// tells a missing document from an empty one. [MutateAll] changes several documents
// all or nothing (see Transactions). [List] and [WatchDir] find and follow
// the documents under a root, [Watch] follows one, and [Quarantine] moves a
// corrupt one aside so that work can resume.
//
// # Examples
//
// Runnable examples with their output, checked by go test (example_test.go,
// document_example_test.go, create_example_test.go): claiming a queued task
// (ExampleMutate), refusing a stale state change (ExampleTransition), one of
// two creators winning (ExampleCreate), keeping fields Status does not
// declare (ExampleLoad), any JSON document (ExampleNewStore), a document
// whose members are kept as raw JSON (ExampleDocument, ExampleStatusDocument), another program's own
// document type with updated_at kept current (ExampleStamper), a truncated
// file left untouched (ExampleCorruptError). pkg.go.dev and go doc -http show
// them; plain go doc does not. docs/MIGRATION.md shows whole handlers moved
// to Mutate.
//
// # Guarantees
//
//   - Mutations of one document are serialised across goroutines and, with
//     the file backend, across processes that follow the locking protocol
//     below: every fn sees the document as its predecessor committed it, and
//     no committed change is lost. The history of Mutate and Load calls is
//     linearizable.
//   - When Mutate returns nil, the document it returns is on disk durably
//     (file and directory fsynced). When it returns an error that
//     [errors.Is] [fs.ErrDurabilityUnknown], the new document replaced the old
//     one but might not survive a crash.
//   - Readers need no lock and always see a complete document, old or new:
//     writers replace the file by rename.
//   - A document that cannot be decoded is never overwritten: Mutate and Load
//     return a [*CorruptError] (errors.Is [ErrCorrupt]) with the path and byte
//     offset, and fn is not called. So is a document that encoding/json
//     reads differently from Python, jq and corestate, or that a decode and
//     re-encode would change: a name that differs from a declared field's
//     only in case ("Runs" next to "runs"), a name repeated in one object,
//     and invalid UTF-8 or a \u escape of a lone surrogate in a declared
//     field or in any name. No Mutate changes bytes its fn did not change
//     (other than the layout below).
//   - A document is a regular file. A symbolic link, named pipe, device or
//     directory at its path is refused by every entry point without
//     blocking or reading it (errors.Is [fs.ErrNotRegular]), and so is a file
//     larger than [DefaultMaxSize] or [WithMaxSize] ([fs.ErrTooLarge]). A link is
//     never followed because in a directory that other users can write it
//     could make a privileged caller read or replace their choice of file.
//   - The path names the file the kernel would open: "link/../status.json"
//     is the status.json next to the link's target, as for Python or cat. A
//     path that ends in a separator, "." or ".." is [fs.ErrInvalidName].
//   - If fn returns an error or panics, nothing is written; the error is
//     returned as is, the panic propagates in the caller's goroutine, and the
//     lock is released. If fn changes nothing, nothing is written.
//   - Fields that T does not declare (written by other programs or newer
//     versions) are kept with their value bytes unchanged. A field that T
//     declares with omitempty disappears when it is cleared.
//   - Waiting for the lock honours ctx: Mutate returns an error wrapping
//     ctx.Err() promptly and changes nothing. Once a caller's fn has run as
//     part of a batch, the caller waits for that batch's write (the etcd
//     backend's caller leaves at once, with an error that tells whether its
//     change may have been sent; see etcdstore). A ctx that is already
//     done fails Mutate and Create at once, even when nobody holds the
//     lock: a task's last write (completion, requeue) during shutdown, when
//     core.Go has cancelled the task's context, needs a context made with
//     [context.WithoutCancel] and a timeout of its own.
//   - A process that dies holding the lock (even by SIGKILL) does not block
//     others: the kernel drops its flock. The document stays the old or the
//     new version.
//   - Files are written in one deterministic layout that humans and other
//     languages read easily: two-space indent, a trailing newline, T's fields
//     in declaration order, then unknown fields sorted by name with their
//     values verbatim, no HTML escaping. A T with both MarshalJSON and
//     UnmarshalJSON methods owns the whole file instead: its UnmarshalJSON
//     gets the file's bytes and its MarshalJSON's bytes are written as they
//     are (plus a final newline), so it can keep raw values byte for byte.
//   - A document type whose pointer is a [Stamper] is stamped with the current
//     time (UTC) when fn changed something else, and only then, and when
//     Create stores it. *Status is one: status.Mutate sets UpdatedAt. A
//     caller's own type is stamped if it has a Stamp method; otherwise an
//     updated_at it does not declare keeps its old value.
//   - [Remove] removes a document and then its lock file while holding the
//     lock; see Deleting a workspace below.
//
// # Not guaranteed
//
//   - Programs that write the file without the lock (for example plain
//     [os.WriteFile]) can still lose updates and expose torn files; the
//     protocol only protects those who follow it.
//   - Flock is advisory and, on network file systems (NFS, SMB), may be
//     local to one machine or unsupported. Use the package on local disks.
//   - Load may return a document that is replaced a moment later; to act on
//     a value, decide inside fn.
//   - Mutual exclusion is per document file: spellings of one path and
//     paths through linked directories share its lock file, but hard links
//     to one file have different locks.
//   - A third-party tool that takes the lock is safe only if it follows the
//     protocol below; see Third-party lockers.
//   - Fairness between processes is best effort; see Waiting for the lock.
//   - fn runs under the lock, always on its caller's goroutine, with every
//     backend: the goroutine that called Mutate, also when another runs the
//     batch (see Group commit), and each time a backend runs it again (the
//     etcd backend re-runs fn after a conflict). It should be short. If fn
//     calls [runtime.Goexit] (t.FailNow, say), only its own caller's goroutine
//     ends, inside Mutate, and its change is dropped, like a panicking fn's;
//     the other calls of its batch are unaffected, except when fn is that of
//     the file backend's batch leader, which runs the batch on its own
//     goroutine: then the rest of that batch fails with an error and nothing
//     is written.
//   - fn must not call Mutate on the same document: the nested call would
//     wait for the lock its caller holds. In the file backend such a call
//     returns an error matching [ErrNested] at once when it is made by the
//     goroutine running fn through the same path spelling (see ErrNested
//     for how); it still waits, until its ctx ends, when it names the file
//     through another path (a linked directory), when fn makes it in
//     another goroutine and waits for it, or when more than 64 functions
//     run at once in the process. The etcd backend does not detect it.
//   - Windows compiles and locks with LockFileEx; what its rename and
//     directory syncs do not guarantee is in the [fs] package doc. Systems
//     without flock return [errors.ErrUnsupported].
//
// # Listing and watching documents
//
// List ([Dir.All]) yields every document under a root, whatever the layout;
// Watch ([Store.Watch]) follows one document and WatchDir ([Dir.Watch]) every
// document under a root, with the iterator shape of etcdstore.Watch: the
// current state first, then each change, until ctx ends or the loop stops.
// A document that cannot be read or decoded yields its [Entry] with an error
// (a *CorruptError with the offset) and the walk or the watch goes on.
//
// Watches see changes through the documents' directories (inotify on
// Linux, through package syscall; elsewhere, or when inotify instances or
// watches run out, polling every 500ms, or every 20 times a poll's cost
// for a large tree), so a replace by rename is one change, read once it is
// complete. Guaranteed:
//
//   - After a change is committed, the watch yields that state or a later
//     one: the last state of a burst is always yielded. States committed
//     faster than the loop reads may be coalesced; a watcher that needs
//     each step must record it in the document (a counter, a history).
//   - Each yielded value is a whole committed version, never a torn read,
//     and a document is yielded only when its bytes differ from what was
//     last yielded for it: the same value is never yielded twice in a row
//     (a rewrite of the same bytes, a touch or a chmod yields nothing). A
//     document that cannot be read is reported once per distinct content
//     or error; a removed one yields an Entry with Removed set.
//   - Each document's states are yielded in commit order; between
//     documents, in the order their changes were noticed.
//   - No goroutine is started; the inotify instance or the polling ends
//     with the loop or ctx (then the sequence ends without an error).
//   - Subdirectories created under a [Dir]'s root, or moved in, are followed
//     and their documents reported; when the watched directory itself (the
//     document's, or the root) is removed or moved, its documents are
//     reported Removed and the sequence ends with an error matching
//     [os.ErrNotExist].
//
// Not guaranteed: files written in place (os.WriteFile, an editor) are
// read when closed, but a read that another event causes meanwhile can see
// them half-written and yield a *CorruptError before the value; polling
// can miss a same-size replace within one timestamp tick on a file system
// that reuses the freed inode at once, until the next change; network file
// systems do not report other machines' writes. Linux allows 128 inotify
// instances per user by default: prefer one WatchDir to many Watch calls.
//
// # Observing the file backend
//
// An [Observer] attached to a context with [WithObserver] receives one [Call]
// per Mutate, Create and Remove made with that context: its wait for the
// lock, the size of its batch, the durable write's duration and its error
// (conflicts, corrupt documents refused, timeouts). It reaches the
// package-level functions, which take no options, without global state;
// a call without it costs one context lookup.
//
// # Recovering from a corrupt document
//
// Mutate refuses a corrupt document for ever, so that nothing is lost.
// corestate fsck lists the corrupt documents under a root with their
// offsets (and crash leftovers). Quarantine, under the document's lock,
// moves a document that Mutate refuses aside to PATH.corrupt-<UTC time>,
// keeping its bytes, so that work resumes from the zero T; it leaves a
// usable document in place. No last-good copy is kept.
//
// # Group commit
//
// When several goroutines of one process mutate the same document at once
// (with the etcd backend: through Stores made from one etcdstore.With), they
// queue, and their calls are committed in batches of up to 256: one read,
// the queued functions one after another in queue order (each sees its
// predecessors' result; a failing or panicking fn drops only its own
// change), one write. The outcome is the same as running the calls one
// after another, and each call still returns only after the write that
// contains its change is durable. Whatever goroutine runs the batch hands
// each caller's fn the current document to run on that caller's own
// goroutine and waits for it.
//
// The file backend starts no goroutine: the first caller in the queue
// becomes the leader. If others are queued it lets callers that are about
// to arrive join (a few yields, before taking the lock, so other processes
// can take it meanwhile; a leader alone on its document does not yield),
// takes the lock, reads the file once, runs the batch, writes the result
// once, releases the lock, wakes the others and hands the lead to the next
// caller in the queue. The etcd backend runs its batches on a goroutine of
// its own per document, alive while the document has queued calls, so that
// a caller whose ctx ends can leave its batch without failing the others
// (see etcdstore).
//
// Writes of different documents in one process share durability work: the
// durable replaces of documents on one file system that are written at
// the same moment share their syncs (see [fs.WriteAtomic]), so each call
// still returns only when its own document is durable.
//
// # Transactions
//
// MutateAll runs one function on several documents under all their locks
// and commits, all or nothing, every change it made: a registry and the
// status files of its tasks keep their shared invariants ("active_count is
// the number of running tasks") through crashes and concurrent callers.
// [LoadAll] reads several documents as they were at one moment. Inside the
// function, [Store.In] returns a document as a *T:
//
//	_, err := status.MutateAll(ctx, []status.Doc{reg, task}, func(tx *status.Tx) error {
//		r := reg.In(tx)
//		if r.Active >= r.Max {
//			return errFull // nothing is written
//		}
//		r.Active++
//		return task.In(tx).Transition(status.Running, status.Queued)
//	})
//
// The documents are a list of Stores, of any types, and In is a method of
// the generic [Store], so each is typed at the call site with no assertion:
// Go has no generic methods on [Tx], and typed forms for two or three
// documents (a Mutate2(ctx, a, b, func(*A, *B) error)) would not cover a
// registry with a variable number of tasks.
//
//   - Guaranteed: each document is presented and stored as Mutate does
//     (unknown fields kept, Stampers stamped, no-change not written). If
//     fn fails or panics, nothing is written. When MutateAll returns nil
//     every change is durable. After a crash at any moment (a SIGKILL
//     between two renames included), every later caller that takes a
//     lock (Mutate, MutateAll, LoadAll, and programs following the
//     protocol below) sees all of a transaction's documents or none. Locks
//     are taken in one canonical order, so transactions over overlapping
//     sets never deadlock, in one process or across processes.
//   - Readers without a lock: Load of one document always returns a whole
//     document, old or new. Loads of several documents may return one
//     from before a transaction and another from after it: during a
//     commit the documents are replaced one after another, and after a
//     crash a document keeps its old version until the next caller that
//     locks it completes the transaction. LoadAll never does.
//   - In one process, a transaction takes its turn in each document's
//     queue like a Mutate call (first come, first served, so neither
//     starves the other). The Mutate calls queued behind it join its
//     commit, and so do the transactions queued behind it whose documents
//     are all among its own, each applied after it in its own goroutine
//     (a failing one drops only its own change). A commit that changes one
//     document writes it as Mutate does; two or more cost three shared
//     syncs (see [fs.BeginSync]), however many calls joined.
//   - Not supported: removing a document in a transaction; documents on
//     different backends; two names of one file, hard links included
//     ([os.ErrInvalid]); document paths that are not valid UTF-8 or hold a
//     newline; a document name longer than 247 bytes (PATH.txn.tmp must
//     fit). fn may run more than once on the etcd backend. The recovery
//     needs write access to the directories.
//
// # Transactions: recovery and what it trusts
//
// A commit that crashes leaves files next to its documents (the protocol
// below): PATH.txn, PATH.txn.tmp and a journal .txn-<16 hex
// digits>.journal. The next caller that locks a document with a marker
// completes the transaction (its journal exists: it committed) or undoes it
// (no journal), before it reads. Because another user of a shared
// directory can plant such files, recovery acts only on what it can trust:
//
//   - It opens only the document's marker, its new content, the document
//     itself (to compare it, below), the journal the marker names and that
//     journal's directory, and, read-only, the markers of the other
//     documents the journal lists (to know whether the journal is still
//     needed). Nothing else a journal names is opened, synced or removed.
//     Every file is opened without following a symbolic link, without
//     blocking, and only if it is a regular file (checked before it is
//     opened, so that no device is ever opened, and again on the
//     descriptor); a directory only as a directory (O_DIRECTORY), to sync
//     it.
//   - Limits: a marker 4 KiB, a journal 1 MiB and 1024 documents, a new
//     content the document's size limit ([WithMaxSize]). Paths in markers
//     and journals must be absolute, clean (no ".."), valid UTF-8, without
//     NUL or newline; the journal's name must have the shape above, lie in
//     the directory of a document it lists, and list the document. ctx is
//     checked between steps.
//   - The trust rule: a marker, new content or journal F in a directory D
//     is used only if it is a regular file with one hard link and either D
//     has no sticky bit, or F's owner is the document's owner, the caller
//     (its effective uid) or D's owner. Whoever can create F in a
//     directory without the sticky bit can also rename over the document
//     directly, so installing F gives them nothing they did not have; this
//     keeps the recommended group workspaces (below), where documents
//     change owner with every writer, recoverable after a member's crash.
//     In a sticky directory (1777, like /tmp) other users cannot replace
//     the document, and recovery refuses their files. The stricter rule
//     "F's owner must be the document's" would refuse a member's crashed
//     commit in a group workspace for good; it is not used.
//   - A state it cannot trust is an error matching [ErrTxUntrusted] that
//     names the file; the document and the transaction's files are left as
//     they are, every locker of the document fails with that error, and
//     corestate fsck lists the file (exit 3) until an operator removes it
//     (after reading it: a transaction file planted by another user is
//     theirs to explain). [CheckTxFile] gives the same verdict without a
//     lock.
//   - Conflicts. The marker records the document's SHA-256 as the
//     transaction read it (or that it did not exist). A program that knows
//     only the basic protocol (lock, read, replace, unlock: flock(1) and jq,
//     an agent older than transactions) may replace or remove a document
//     after a crash past the commit point and before anyone recovers it.
//     Recovery then does not install the transaction's copy over that
//     acknowledged write: it keeps the document, moves the copy to
//     PATH.conflict-<UTC time>, finishes the transaction's cleanup and
//     returns an error matching [ErrTxConflict] naming both (the call's fn
//     does not run; a retry proceeds). The transaction's other documents
//     hold its new contents. An operator compares the copy with the
//     document, applies by hand (corestate set, under the lock) whatever of
//     the transaction's change to this document is still wanted, and
//     deletes the copy; fsck lists copies (exit 3) until then.
//   - Conforming clients are those that follow the whole protocol below,
//     recovery included: this package (every call that takes a lock),
//     corestate (through this package), and the Python package in the
//     repository's python directory. Clients of the basic protocol keep
//     their acknowledged writes (the conflict above) but see a crashed
//     transaction's documents as they were until a conforming client locks
//     them. Versions of this package before the BEFORE line read a marker
//     of this format as foreign and undo it: upgrade all the writers of a
//     set of documents together.
//   - A marker that is empty or an unfinished prefix of one (a crash or a
//     power loss between its creation and its sync) is undone: a commit
//     makes every marker durable before it writes its journal, so none can
//     exist for it. A marker of the earlier one-line format is recovered
//     without the conflict check.
//   - Deleting: [Store.Remove] first completes the whole pending
//     transaction of the document, if any: every document whose marker
//     names its journal, under their locks taken in the canonical order,
//     and every transaction whose journal lies in the document's directory
//     and lists it. Then it removes the document. So removing the
//     directory afterwards deletes no journal another document still needs,
//     and no later caller sees half a transaction, a blocked document, or a
//     false [fs.ErrDurabilityUnknown] (which still means only that the
//     call's own new document replaced the old one and a later sync
//     failed).
//   - A crash between the last two steps of a recovery can leave a journal
//     that no marker names: it can never be needed again (markers are
//     created before their journal and removed after it). fsck lists it
//     (orphan, exit 3) and corestate sweep ([SweepJournals]) removes it.
//
// # Waiting for the lock
//
// A caller that finds the lock taken waits in its own goroutine and
// honours ctx (a blocking flock could not be cancelled). On Linux it sleeps
// on the lock file's bell: a futex word in a shared mapping of the first
// page of PATH.lock, which a waiter first extends to four zero bytes if it
// is empty; nobody writes them after that. A process of this package that
// releases the lock wakes the process that has slept longest, so waiters
// are served in the order they went to sleep (a waiter whose timeout ran
// out sleeps again behind the others), and a release wakes one process,
// not all of them. A process whose release woke a waiter goes to sleep
// behind the others before it tries again. Each waiter also tries the lock
// at its own timeouts: 20ms, then as long as it has waited so far, at most
// 200ms.
//
// So a waiter gets a lock that has been freed within its current timeout
// at most, whatever other processes do, short of holding the flock: the
// bell only ever makes it try sooner. A stopped waiter (SIGSTOP, a paused
// container, a debugger) leaves the bell's queue; a reader that sleeps on
// the bell takes the rings meant for the next waiter, who then has its
// timeout; a reader that rings it for nothing wakes a waiter at most four
// times per timeout, after which the waiter ignores the bell until the
// next one; byte-range locks held on the lock file, opens and closes of
// it, and other time namespaces change nothing. Only a process that holds
// the flock keeps a waiter out, as with any flock-based tool.
//
// The repository's Python package waits and rings as this package does,
// in the same queue. Not guaranteed: a release by a program that does not
// ring (flock(1), other languages' clients, a version of either package
// before the bell)
// reaches a sleeping waiter only at its next timeout; such programs poll or
// block in flock themselves, and take the lock meanwhile. The kernel's close of
// PATH.lock, which every locker makes, takes time in proportion to the
// byte-range locks that others hold on it (about 0.1µs each). Where there
// is no bell (systems other than Linux, a lock file that a waiter may
// neither extend nor map) waiters poll with a backoff of up to 5ms, in no
// order. docs/BENCHMARKS.md has the measured delays.
//
// # Locking protocol (for programs in any language)
//
// Python programs use the package in the repository's python directory
// (import agentstate), which follows this protocol, recovery of
// transactions included, and writes the layout above; shell scripts use
// corestate. To change a document at PATH:
//
//  1. Open PATH.lock (the document's path with ".lock" appended) with a
//     fresh open(2) for this acquisition, with O_RDWR|O_CREAT|O_NOFOLLOW|
//     O_NONBLOCK|O_CLOEXEC (O_RDONLY if you may not write it: a read-only
//     descriptor takes a flock too), and refuse it unless fstat says it is a
//     regular file. If you create it and PATH exists, give it PATH's
//     permission bits (fchmod, so that whoever may write PATH may open its
//     lock) and, as root, PATH's owner; otherwise create it with the mode
//     PATH will get. Never rename, truncate or write PATH.lock (it may hold
//     four zero bytes, see Waiting for the lock), never delete it except as
//     in [Remove] below, and never lock PATH itself: PATH is replaced by
//     rename, so a lock on it would be lost.
//  2. Take flock(2) LOCK_EX on that descriptor (Python:
//     fcntl.flock(fd, fcntl.LOCK_EX)). flock, not fcntl/lockf record locks:
//     those are per process and would not exclude our goroutines.
//  3. Check that you locked the file that PATH.lock names now: fstat the
//     descriptor, lstat PATH.lock; if the name is gone or has another
//     device or inode, a tool deleted it (and someone may hold a lock on a
//     new file of that name): close the descriptor and go back to step 1.
//  4. If PATH.txn exists, complete or undo the transaction it belongs to
//     (Recovery, below; a client that skips this step is a basic client,
//     see Transactions). Then read PATH without following a symbolic link
//     and only if it is a regular file. A missing PATH means no document
//     yet: a writer starts from the empty document (in Go the zero T, in
//     Python {}).
//  5. Write the new document to a new temp file in PATH's directory, fsync
//     it, rename(2) it over PATH (Python: os.replace), then fsync the
//     directory. Name the temp file ".<base of PATH>.<16 random hex
//     digits>.tmp" and create it with O_EXCL, as this package does: that
//     is the name [fs.SweepTemp] and corestate sweep remove when a crash
//     leaves one behind (other names work, but are not swept). Write
//     nothing if you have no change. To remove the document instead,
//     unlink PATH, then PATH.lock, then fsync the directory.
//  6. Close the lock descriptor, which releases the lock. On Linux, ring
//     the bell (see Waiting for the lock) so that a sleeping waiter gets
//     the lock at once rather than at its timeout: before the close, if
//     PATH.lock is not empty, open it again O_RDONLY, check that fstat
//     gives the locked file's device and inode, and mmap its first four
//     bytes PROT_READ, MAP_SHARED; after the close, call futex(2) on that
//     address with FUTEX_WAKE_BITSET, 1 and the bitset 0xffffffff (no
//     FUTEX_PRIVATE_FLAG), then unmap and close. Never extend or write
//     the file to ring; if any of this fails, do not ring.
//
// Readers just open and read PATH. On Windows the lock is an exclusive
// LockFileEx on the first byte of PATH.lock, and steps 1 and 3 do not
// apply.
//
// To change several documents in one transaction (agentstate.mutate_all
// in Python):
//
//  1. Open every document's PATH.lock (step 1) and fstat it; take the
//     locks in the order of (st_dev, st_ino), steps 2 and 3 for each. Two
//     documents with one identity are one file: refuse. If a lock file
//     was replaced meanwhile (step 3), release every lock and start over.
//     This order is the same in every process, whatever path names a file.
//  2. Step 4 for every document.
//  3. If one document changed, write it as in step 5; if two or more,
//     commit them as below.
//  4. Release the locks (step 6).
//
// To commit two or more changed documents, pick a fresh journal name
// J = DIR/.txn-<16 random hex digits>.journal, an absolute clean path, DIR
// being the directory of one of them:
//
//  1. For each changed PATH: BEFORE is the lowercase hex SHA-256 of PATH's
//     bytes as read under the lock, or the word none if PATH did not
//     exist. Create PATH.txn exclusively (O_CREAT|O_EXCL|O_NOFOLLOW)
//     holding exactly two lines, J and BEFORE ("J\nBEFORE\n"). Unlink any
//     PATH.txn.tmp (never a directory: a directory there fails the commit),
//     create it exclusively with PATH's permission bits (and owner, if you
//     may) and write the new document to it. Write {"documents": [...]},
//     the changed documents' absolute clean paths, to a new temp file in
//     DIR named as in step 5 of the protocol above.
//  2. fsync every PATH.txn, every PATH.txn.tmp, the journal's temp file
//     and their directories (or call syncfs(2) once per file system).
//  3. Rename the temp file to J and fsync DIR: the transaction is
//     committed. A J that exists is complete.
//  4. Rename every PATH.txn.tmp over its PATH; fsync the directories.
//  5. Remove J, then every PATH.txn.
//
// Recovery, by whoever holds PATH's lock and finds PATH.txn, opening every
// file by the rules of Transactions (no final symbolic link, no blocking,
// regular files only, the size limits, the trust rule) and checking ctx
// between steps. A state those rules refuse is an error naming the file,
// and nothing changes.
//
//  1. Read PATH.txn: line 1 is J, line 2 BEFORE. An empty marker, or a
//     prefix of one without a newline, was never completed: undo (step 2).
//  2. Open J. If it does not exist, the transaction did not commit: unlink
//     PATH.txn.tmp if present (never a directory), then PATH.txn. Done.
//  3. J exists: parse it strictly (one member, documents). It must list
//     PATH (or a path whose PATH.txn is the same file as the one found) and
//     lie in the directory of a document it lists.
//  4. Committed: fsync J and its directory (the writer may have died before
//     J's rename was durable). If PATH.txn.tmp exists: if PATH now is not
//     what BEFORE says (absent for none, else a regular file with that
//     SHA-256), a basic client replaced or removed it after the commit
//     point: rename PATH.txn.tmp to PATH.conflict-<UTC time>, fsync the
//     directory, finish step 5 and report the conflict. Otherwise fsync
//     PATH.txn.tmp, rename it over PATH, check that PATH is the file opened
//     (device and inode), fsync the directory.
//  5. If no other listed document has a PATH.txn naming J (a regular file
//     whose first line is J), unlink J, then PATH.txn. Otherwise unlink
//     PATH.txn, look at the other markers again, and unlink J if none names
//     it now: of two recoverers of one transaction at once, the later to
//     look removes J.
//
// Why this holds: J exists, complete, only after every marker and new
// content is durable, and the documents are replaced only after J is; so
// every locker of any document of the transaction decides the same way
// from J, and completing is idempotent. J is removed only when no marker
// needs it (a marker without J undoes, which is a no-op for a document
// already installed). Each document is completed only under its own lock,
// so single-document serialisation holds. A commit that crashed before J
// leaves markers that undo; one that crashed after J, markers that
// complete. The tests kill commits at every step (SIGKILL) and cut the
// power under them (LazyFS, which drops unsynced data but cannot lose a
// directory entry).
//
// A document's own name may be at most 250 bytes where a file name may have
// 255 (ext4, XFS, Btrfs, tmpfs, APFS): its lock file needs five more
// ([ErrNameTooLong]).
//
// # Third-party lockers
//
// A tool that takes flock(2) on PATH.lock and leaves the file in place
// excludes Mutate and is excluded by it: util-linux flock(1), Python's
// fcntl.flock, filelock 3.9 (Debian) and 3.32 or later, portalocker.Lock.
// filelock 3.20.4 to 3.29.4 delete PATH.lock before they unlock: step 3
// makes that safe for every caller that re-checks, but such tools do not
// re-check themselves, so two of them may still both hold the lock.
// portalocker's TemporaryFileLock deletes PATH.lock after it unlocks: a
// caller that locked the file in between passes the re-check, and the
// deletion then lets a newcomer lock a new file, so updates can be lost; do
// not use it on these files. fcntl/lockf record locks (fasteners) do not exclude
// flock at all, and Node's proper-lockfile makes PATH.lock a directory,
// which Mutate refuses (fs.ErrNotRegular).
//
// # Shared workspaces and deleting a workspace
//
// In a workspace that several users share through a group, make the
// directories group-owned with the setgid bit (chmod g+s) and give the
// documents group write (WithPerm(0o664) or 0o660, under a umask such as
// 002 that keeps it): every lock file then gets its document's bits, so
// each member can open it read-write, as Python lockers do. A lock file
// made before its document existed, or by another tool, keeps its mode:
// chmod it once.
//
// To delete a workspace: put its document in a final state (a later
// [Transition] without an explicit from list then fails with [ErrConflict]),
// stop its writers, Remove the document (which first completes any
// transaction pending on it, see Transactions), then remove the directory. Remove
// takes its turn under the lock, so no writer is half-way through; a writer
// that arrives after the directory is gone fails (its lock file cannot be
// created) instead of recreating anything. One that arrives between Remove
// and the directory's removal finds no document and creates one only if its
// fn changes the zero value (a guarded Transition does not): removing the
// directory then deletes it. Processes that do not re-check the lock file
// (step 3) can lose updates around a Remove, as with any deleting tool.
package status
