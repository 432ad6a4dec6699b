// Command corestate reads and changes agent workspace status files with the
// locking protocol of package status, sweeps the temp files that interrupted
// writes leave behind, and demonstrates why the protocol exists.
//
// Usage:
//
//	corestate demo [--procs N] [--goroutines N] [--updates N] [--readers N] [--dir DIR] [--timeout D]
//	corestate get [--json] [--max-size N] FILE [FIELD]
//	corestate set [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD=VALUE...
//	corestate incr [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD [N]
//	corestate tx [--timeout D] [--max-size N] FILE [OP]... [-- FILE [OP]...]...
//	corestate sweep [--older-than D] DIR
//	corestate fsck [--name PATTERN] [--max-size N] ROOT
//	corestate quarantine [--timeout D] [--max-size N] FILE
//	corestate help [COMMAND]
//
// # demo
//
// demo runs three writers side by side on a temporary directory, one after
// the other with the same parameters: the CONTROL, the bare read-modify-write
// of the agent services (os.ReadFile, json.Unmarshal, runs++, os.WriteFile in
// place, no lock); a second control, upstream's later half-fix, the same
// cycle with an atomic write (fs.WriteAtomic) but still no lock; and this
// module's status.Mutate. Each side starts --procs
// worker processes (corestate re-executes itself) of --goroutines goroutines,
// each goroutine making --updates increments of the "runs" field, while
// --readers goroutines of the parent read the file without a lock and count
// torn reads (an empty file or one that does not decode). It prints what each
// side ran, then a table with one row per side:
//
//	side | lock | write | attempted | lost | torn reads: readers | torn reads: writers | kept updates/s
//
// lock and write say how the side updates the file, which explains the
// other columns: without a lock updates are lost, in-place writes tear, and
// every fsync costs time (status.Mutate pays one per batch of waiting
// goroutines). A writer that reads a torn file gives up its update. kept
// updates/s counts only the updates that survived. A key under the table
// says the same.
//
// The controls are expected to lose updates (and the bare one to show torn
// reads); a run in which a control loses nothing is reported as such, not as
// a failure.
// demo exits 6 if the status.Mutate side lost any update, saw a torn read
// or failed. The temporary directory is removed unless --dir is given.
// Worker processes are killed when the run ends, times out or is interrupted,
// and they exit by themselves if the parent dies (their stdin closes).
//
// # get
//
// get prints the document at FILE, or one top-level FIELD of it. The whole
// document is printed as status.Mutate lays it out: two-space indent, the
// fields of status.Status first in their declared order, then any other
// fields sorted by name, every value exactly as the file holds it. A FIELD whose
// value is a JSON string prints raw (no quotes, no escaping) so that shell
// scripts can use it directly; any other value prints as compact JSON
// (3, true, null, {"a":1}). --json prints strings JSON-encoded too.
// A field of status.Status that the file omits prints its zero value, as a Go
// reader of the file would see it; a missing field that status.Status does
// not declare is "not found" (exit 2). get takes no lock: the file is
// replaced by rename, so it is always complete.
//
// # set
//
// set applies FIELD=VALUE pairs in one status.Store Mutate, under the
// document's lock (waiting at most --timeout, default 30s; 0 waits until
// interrupted; a negative value is a usage error), and prints the committed
// document. Fields that corestate
// does not know are kept byte for byte, and may be set. VALUE is taken as JSON when it
// parses as JSON (runs=3, ok=true, tags=["a"], note="x y") and as a plain
// string otherwise (status=running). The fields of status.Status are checked
// against their Go types (runs must be an integer; started_at an RFC 3339
// time; status one of queued, running, completed, blocked, failed, merged,
// ready-for-review, rejected); a string field takes VALUE as written unless
// VALUE is a JSON string literal (branch=123 sets the string "123").
// FIELD=null removes FIELD (status cannot be removed). FIELD=VALUE must be
// valid UTF-8 (exit 5 otherwise), as JSON shared between programs must be. If anything changed and
// updated_at was not set explicitly, updated_at is set to the current UTC time,
// as status.Mutate does. If nothing changed, nothing is written. A missing
// FILE is created (its directory must exist); a corrupt FILE is never
// overwritten. FILE is read by status.Load's rules: a document that Go reads
// differently from other languages (a name differing from a status.Status
// field only in case, a repeated name, invalid UTF-8 or a lone surrogate in
// a name or a status.Status field) or whose status.Status field does not
// hold its Go type is corrupt (exit 3), so that --if never passes on what
// Go agents would not see; a link, pipe or device at FILE is refused (exit
// 7), as is a file over 16 MiB (status.DefaultMaxSize).
//
// # Guards and transitions
//
// set and incr take repeatable --if FIELD=VALUE[,VALUE...] guards, checked
// under the same lock and in the same Mutate as the change, so that
// "claim the task if it is still queued" is one atomic step for a script
// (get followed by set is not: another writer can come between them):
//
//	corestate set ws/status.json status=running pid=$$ --if status=queued || exit
//
// Every --if must hold; one holds if FIELD currently equals one of its
// VALUEs. VALUE is parsed as set's VALUE (and checked against the type of a
// status.Status field), except that null means "absent (or null)". A VALUE
// that is one JSON value is one alternative (note="a,b", tags=["a","b"]);
// otherwise it is split at every comma (status=queued,blocked). Values
// compare as JSON values: objects regardless of key order, numbers
// numerically. An absent status.Status field compares as its zero value, as
// get prints it (--if runs=0 holds on a new file). If a guard does not hold,
// nothing is written and the command exits 8 with a one-line error naming the
// field, its current value and the values wanted.
//
// A guard FIELD<VALUE, FIELD<=VALUE, FIELD>VALUE or FIELD>=VALUE compares
// numbers instead: VALUE is a JSON number or, otherwise, the name of
// another field of the same document (a cap: --if
// 'active_count<max_concurrent'). An absent or null field counts as 0, as
// for incr; a value that is not a number exits 5. A guard's FIELD cannot
// contain <, > or =.
//
// When set changes the status of a document whose status is a string (or
// absent), it also applies status.Status.Transition: a final state
// (completed, failed, merged, rejected; see status.State.Final) is never
// left unless an --if on status names it, so a late "status=running" cannot
// revert a completed task. That conflict exits 8 too. Re-stating the current
// status is not a transition and is allowed.
//
// # incr
//
// incr adds N (default 1) to the integer FIELD in one Mutate and prints the
// committed document. An absent or null FIELD counts as 0. A current value
// that is not an integer literal, a status.Status field that is not an
// integer, or an int64 (or field type) overflow exits 5 and writes nothing.
// A negative N must follow "--" (incr FILE runs -- -1), or it reads as a
// flag.
//
// # tx
//
// tx changes several documents in one transaction (status.MutateAll): the
// arguments after tx's own flags are documents separated by "--", each a
// FILE followed by OPs: --if GUARD (or --if=GUARD), as for set and incr;
// FIELD=VALUE, as for set; FIELD+=N and FIELD-=N, as incr with N or -N.
// Under the locks of every FILE (taken in the protocol's canonical order,
// waiting at most --timeout), tx checks every guard and the status
// transition rule of every document and applies the changes; then every
// document that changed is written (with updated_at set, one time for all)
// or none is, also if the process dies half-way: the next locker of any of
// them completes or undoes the commit. If a guard does not hold, nothing is
// written and tx exits 8. It prints the committed documents in the order
// given, one after another (a JSON stream: jq -s reads it). Claim a task
// and count it in its registry, refusing at the registry's cap:
//
//	corestate tx registry.json --if 'active_count<max_concurrent' active_count+=1 \
//	          -- tasks/42/status.json --if status=queued status=running || exit
//
// Naming one file twice is a usage error (exit 1), so is FIELD changed
// twice in one document.
//
// # sweep
//
// sweep removes, from directory DIR (not its subdirectories), the temp files
// ".<name>.<16 hex digits>.tmp" that writes interrupted by a crash left
// behind, when they are older than --older-than (default 1h), using
// fs.SweepTemp. It prints each removed path on its own line; a path with a
// control character (a newline...), bytes that are not UTF-8 or a leading
// double quote is printed Go-quoted ("a\nb"), so one line is always one
// path.
//
// # fsck
//
// fsck checks every document under ROOT without locking and changes
// nothing. Documents are the files named like --name (default
// status.json, a path.Match pattern) at any depth, found as status.List
// finds them (directories whose name starts with "." are not entered,
// links are not followed), and read by status.Load's rules. It prints one
// line per finding, KIND, PATH and a detail separated by tabs (PATH quoted
// as sweep quotes it):
//
//	corrupt      a document that does not decode, with the byte offset
//	refused      a document larger than --max-size or not a regular file,
//	             or a lock file that is not a regular file
//	unreadable   a file or directory that could not be read
//	temp         a temp file of an interrupted write (sweep removes it)
//	lock         a lock file without its document (harmless)
//	txn          a transaction marker, left for the next writer to recover
//	quarantined  a copy that quarantine moved aside
//
// and a last line with the counts. It exits 3 when a document is corrupt
// or refused (work on it is blocked until it is repaired or quarantined),
// 7 when something could not be read, 2 when ROOT is missing, and 0
// otherwise: leftovers alone are not failures.
//
// # quarantine
//
// quarantine moves FILE aside if every writer refuses it (status.Quarantine:
// it does not decode by status.Load's rules, or it is larger than
// --max-size), so that work can resume: under the document's lock (waiting
// at most --timeout), FILE is renamed to FILE.corrupt-<UTC time> beside it
// (with -2, -3... if that name is taken: nothing is ever replaced), and the
// move is made durable. The bytes are kept as they were. It prints the new
// path. A FILE that decodes is left in place and quarantine exits 9; a
// missing FILE exits 2; a link, pipe or directory at FILE is not moved
// (exit 7).
//
// # Output and exit codes
//
// Output is plain text without colour, stable for scripts. Errors go to
// stderr as one line starting with "corestate: ". Exit codes:
//
//	0    success
//	1    usage error (unknown command or flag, wrong arguments)
//	2    not found (FILE, DIR, or a FIELD that get cannot find)
//	3    corrupt document (the file does not decode as a JSON object); the file is untouched; fsck: a document cannot be used
//	4    timeout (set, incr, tx: a lock was not acquired within --timeout; demo: the run exceeded --timeout)
//	5    bad field (a name or value that status.Status does not accept)
//	6    demo failed (the status.Mutate side lost an update, saw a torn read, or erred)
//	7    any other error (permission denied, I/O error...)
//	8    conflict (set, incr, tx: an --if did not hold, a cap was reached, or a final status would be left); nothing is written
//	9    not corrupt (quarantine: FILE decodes); nothing is moved
//	130  interrupted (SIGINT or SIGTERM)
//
// # Signals
//
// SIGINT or SIGTERM ends a wait for the lock at once: nothing is written and
// corestate exits 130. A command still running one second later (a write
// already started, output to a pipe nobody reads) is ended then, with exit
// 130; a second signal ends it at once. An ended process holds no lock.
package main
