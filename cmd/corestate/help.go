package main

// The package doc (doc.go) is this help text; TestDoc fails when they differ.
//go:generate go test -run ^TestDoc$ -update-doc

import (
	"fmt"
	"io"
)

const helpMain = `corestate reads and changes agent status files, and any other JSON document,
with the locking protocol of package status, lists documents by their fields,
sweeps the temp files that interrupted writes leave behind, checks and
quarantines corrupt documents, and admits work under caps with registries of
slots.
(The demo of why the protocol exists is a program of its own: make demo.)

Usage:
  corestate get   [--json] [--kind K] [--max-size N] FILE [FIELD]...
  corestate set   [--timeout D] [--kind K] [--perm MODE] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD=VALUE...
  corestate incr  [--timeout D] [--kind K] [--perm MODE] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD [N]
  corestate tx    [--timeout D] [--kind K] [--perm MODE] [--max-size N] FILE [OP]... [-- FILE [OP]...]...
  corestate sweep [--older-than D] ROOT
  corestate fsck  [--name PATTERN] [--kind K] [--max-size N] ROOT
  corestate list  [--name PATTERN] [--kind K] [--max-size N] [--where FIELD=VALUE[,VALUE...]]... [--fields FIELD,...] [--json] ROOT
  corestate quarantine [--timeout D] [--kind K] [--max-size N] FILE
  corestate reap  [--timeout D] [--kind K] [--max-size N] [--member NAME] [--in ARRAY] [--count [FILE:]FIELD]... [--set FIELD=VALUE]... [--dead-host HOST]... FILE...
  corestate owner PID
  corestate slot  reserve|adopt|handover|release|abort|reap|list [FLAG]... REG ...
  corestate help  [COMMAND]

A FILE named status.json is a status document (status.StatusDocument): its
fields of status.Status must hold their Go types, set and tx apply the status
transition rule, and updated_at is set when it changes. Any other FILE is a
JSON object with members of any type (status.Document): nothing is stamped and
no member has a rule. --kind status or --kind json says which a FILE is,
whatever its name. A document is corrupt (exit 3) and never overwritten if it
is not a JSON object, repeats a name, or has invalid UTF-8 or a lone surrogate
in a name; a status document also if a name differs from a status.Status
field only in case, or a status.Status field holds such bytes or does not
hold its Go type. A link, pipe or device at FILE is refused (exit 7), as is a
file over --max-size.

Exit codes:
  0    success
  1    usage error (unknown command or flag, wrong arguments)
  2    not found (FILE, ROOT, or a FIELD that get cannot find)
  3    corrupt document (left untouched); fsck: a document cannot be used, or
       a transaction file needs an operator
  4    timeout (set, incr, tx, quarantine: a lock not acquired within --timeout)
  5    bad field (a name or value that the document does not accept)
  7    other error (permission denied, I/O error...)
  8    conflict (an --if did not hold, a cap was reached, or a final status would
       be left); nothing written
  9    not corrupt (quarantine: FILE decodes; nothing moved)
  10   exists (slot reserve: a slot with this key is active; it is printed)
  130  interrupted (SIGINT or SIGTERM)

Output is plain text without colour, stable for scripts. An error is one line
on stderr starting with "corestate: " (list first reports each document it
cannot read on a line of its own); a file name in them that holds a
control character, bytes that are not UTF-8 or a leading double quote is
Go-quoted ("a\nb.json"), as sweep prints names.

sweep, fsck and list walk the tree under ROOT, at any depth: directories
whose name starts with "." are not entered and links are not followed;
ROOT itself may be a link, to the tree to walk. Each PATH they print is ROOT
as given joined with the file's path under it, cleaned (./ws/ gives ws/a/...):
relative when ROOT is relative, absolute when ROOT is absolute, and through
ROOT when ROOT is a link. A PATH with a control character, bytes that are
not UTF-8 or a leading double quote is printed Go-quoted ("a\nb"), so that
one line is one path.

--timeout bounds each wait for a lock (default 30s, as in the Python package;
Go callers bound it with their context: docs/PROTOCOL.md, How long a client
waits). SIGINT or SIGTERM ends a wait for a lock at once: nothing is written,
exit 130. A command still running one second later (a write already started,
output to a pipe nobody reads) is ended then, with exit 130; a second signal
ends it at once. An ended process holds no lock.

Not guaranteed. Only top-level fields are addressed: no a.b paths, no array
appends, and guards compare whole top-level values. get followed by a set
without --if keeps the race that --if removes: put the decision into the
guard (the final-status rule covers set's changes of status only). Programs
that write FILE without the lock can still lose an update. sweep trusts
modification times: pick --older-than well above the longest write. On
Windows the commands are built but not tested; there the lock is LockFileEx,
the rename is not documented atomic and a directory cannot be fsynced (see
the fs and status package docs).
`

const helpGet = `Usage: corestate get [--json] [--kind K] [--max-size N] FILE [FIELD]...

Prints the document at FILE, laid out as set writes it (two-space indent; in a
status document the fields of status.Status first, in their declared order;
the other members sorted by name; every value as the file holds it), or the
value of each top-level FIELD, one per line, in the order given, all from one
read: a JSON string prints raw (no quotes, no escaping, for shell scripts),
anything else as compact JSON (3, true, null, {"a":1}). A field of
status.Status that a status document omits prints its zero value, as a Go
reader sees it; another missing field exits 2, printing nothing. A raw
string may hold a newline: with --json every value is one line. get takes no
lock: writers replace the file by rename, so it is always complete.

  { read -r state; read -r pid; } < <(corestate get ws/status.json status pid)

Flags:
  --json         print a string FIELD JSON-encoded (quoted) too
  --kind K       status or json (default: status for a FILE named status.json)
  --max-size N   refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
`

const helpSet = `Usage: corestate set [--timeout D] [--kind K] [--perm MODE] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD=VALUE...

Applies the assignments in one status.Store Mutate, under the document's lock,
and prints the committed document. VALUE is JSON if it parses as JSON (runs=3,
ok=true, note="a b", tags=["x"]), else a plain string (status=running). In a
status document, fields of status.Status must fit their Go type (runs an
integer, started_at an RFC 3339 time, status one of queued, running,
completed, blocked, failed, merged, ready-for-review, rejected); a string
field takes VALUE as written unless it is a JSON string (branch=123 sets the
string "123"). FIELD=null removes FIELD (a status document's status cannot be
removed). FIELD=VALUE must be valid UTF-8 (exit 5). Other fields are kept byte
for byte and may be set. If anything changed in a status document and
updated_at was not set explicitly, updated_at is set to the current UTC time;
if nothing changed, nothing is written. A missing FILE is created, with the
permission bits of --perm minus the umask (its directory must exist; under
umask 002, --perm 0664 makes a group-writable document).

Guards are checked under the same lock, before the change, so that "claim the
task if it is still queued" is one atomic step (get followed by set is not).
If one does not hold, nothing is written and set exits 8 (conflict), naming
the field, its value and the values wanted. Every --if must hold; one holds if
FIELD equals any of its comma-separated VALUEs (status=queued,blocked; a VALUE
that is one JSON value is never split: note="a,b", tags=["a","b"]). VALUEs
parse as set's, except that null means "absent (or null)". Values compare as
JSON values: objects regardless of key order, numbers numerically. A VALUE
that is a bare number, true or false also holds for the JSON string of the
same text, as another program may have stored it: run_id=12345 holds for
12345 and for "12345"; a quoted VALUE holds only for the string (--if
'run_id="12345"'). An absent status.Status field of a status document
compares as its zero value, as get prints it (--if runs=0 holds on a new
file). --if FIELD<VALUE (or <=, >, >=) compares numbers: VALUE
is a number or else the name of another field, and an absent or null field
counts as 0 (--if 'active_count<max_concurrent'; quote it for the shell); a
value that is not a number exits 5. A guard's FIELD cannot contain <, > or =.

In a status document, changing status away from a final state (completed,
failed, merged, rejected) also exits 8 unless an --if on status names that
state, so a late status=running cannot revert a completed task; re-stating
the current status is allowed. A safe claim from a shell:

  corestate set ws/status.json status=running pid=$$ --if status=queued || exit

Flags:
  --timeout D            wait at most D for the lock (default 30s; 0 = no limit;
                         negative: usage error)
  --kind K               status or json (default: status for a FILE named status.json)
  --perm MODE            permission bits of a FILE that is created, in octal
                         (default 0644; the umask is applied)
  --max-size N           refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
  --if FIELD=VALUE,...   change only if FIELD is one of the VALUEs (repeatable)
`

const helpIncr = `Usage: corestate incr [--timeout D] [--kind K] [--perm MODE] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD [N]

Adds N (default 1; a negative N goes after --: incr FILE runs -- -1) to the
integer FIELD under the document's lock, in one read-modify-write, and prints
the committed document. An absent or null FIELD counts as 0. A current value
that is not an integer, a field of status.Status that is not an integer (in a
status document), or an overflow (of int64 or the field's Go type) exits 5
(bad field); nothing is written. updated_at is set as by set, in a status
document. --if works as for set (exit 8 when a guard does not hold),
comparisons too.

Flags:
  --timeout D            wait at most D for the lock (default 30s; 0 = no limit)
  --kind K               status or json (default: status for a FILE named status.json)
  --perm MODE            permission bits of a FILE that is created, in octal (default 0644)
  --max-size N           refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
  --if FIELD=VALUE,...   change only if FIELD is one of the VALUEs (repeatable)
`

const helpTx = `Usage: corestate tx [--timeout D] [--kind K] [--perm MODE] [--max-size N] FILE [OP]... [-- FILE [OP]...]...

Changes several documents in one transaction (status.MutateAll): under the
locks of every FILE (taken in the protocol's canonical order) it checks every
guard and the status transition rule of every document and applies every
change, then writes every document that changed, all or nothing, even if the
process dies half-way (the next locker of any of them completes or undoes the
commit). It prints the committed documents one after another, in the order
given (a JSON stream: jq -s reads it). The OPs of a FILE:

  --kind K       this FILE's kind, status or json (also --kind=K)
  --if GUARD     as for set, comparisons included (also --if=GUARD)
  FIELD=VALUE    as for set (status transitions included)
  FIELD+=N       add N to an integer field, as incr; FIELD-=N subtracts

updated_at is set to now, one time for all, in each status document that
changes (the registry below is not one: it is named registry.json). If
a guard does not hold anywhere, nothing is written and tx exits 8 (conflict).
Naming one FILE twice, or changing a FIELD twice in one document, is a usage
error. Claim a task and count it in the registry, refusing at the cap:

  corestate tx registry.json --if 'active_count<max_concurrent' active_count+=1 \
            -- tasks/42/status.json --if status=queued status=running || exit

Flags (before the first FILE):
  --timeout D    wait at most D for the locks (default 30s; 0 = no limit)
  --kind K       the kind of every FILE without a --kind of its own (default:
                 status for a FILE named status.json, json for any other)
  --perm MODE    permission bits of a FILE that is created, in octal (default 0644)
  --max-size N   refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
`

const helpSweep = `Usage: corestate sweep [--older-than D] ROOT

Removes from ROOT and every directory under it that fsck checks the temp
files (".<name>.<16 hex digits>.tmp") that writes interrupted by a crash left
behind, when older than D (fs.SweepTemp), and the transaction journals
(".txn-<16 hex digits>.journal") that no marker names, whatever their age
(txfile.Sweep: a crash between the last two steps of a recovery can
leave one, and it is never needed again). It prints each removed PATH on its
own line, in the form fsck prints (see corestate help), directory by
directory. A journal that is still needed is left; one that cannot be read
or trusted (in a sticky directory, another user's), and a directory that
cannot be read, are left and reported, and the other directories are swept
(exit 7).

Flags:
  --older-than D   minimum age of a temp file (default 1h)
`

const helpFsck = `Usage: corestate fsck [--name PATTERN] [--kind K] [--max-size N] ROOT

Checks every document under ROOT, at any depth, as status.List finds them
(the walk and the form of PATH are in corestate help), and lists, one per
line:

  corrupt      PATH  at byte N: why      (does not decode: every writer refuses it)
  refused      PATH  why                 (too large, not a regular file, or a lock
                                          file that is not a regular file or, in a
                                          sticky directory, is another user's)
  unreadable   PATH  why                 (permission denied, I/O error)
  temp         PATH  age                 (left by an interrupted write; see sweep)
  lock         PATH  no document         (harmless)
  txn          PATH  transaction file    (a marker, new content or journal that the
                                          next writer of its documents finishes with)
  blocked      PATH  why                 (a transaction file that recovery refuses:
                                          every writer of its document fails until
                                          an operator removes it)
  conflict     PATH  why                 (a transaction's copy kept after a conflict,
                                          or a marker whose recovery will keep one)
  orphan       PATH  journal             (no marker names it; sweep removes it)
  quarantined  PATH  a copy moved aside by quarantine

Fields are separated by tabs. A last line counts everything. fsck reads without locking and changes nothing. Documents
are the files named like PATTERN (path.Match), checked as get reads them: one
named status.json as a status document, any other as a JSON object, unless
--kind names one kind for all. Transaction files are checked by
txfile.Check. What an operator does with a blocked file or a conflict
copy is in docs/PROTOCOL.md (Basic and conforming clients).

Exit codes: 0 every document can be used and no transaction file needs an
operator (leftovers alone are not failures); 3 at least one corrupt or
refused document, or a blocked, conflict or orphan line (work on it is
blocked until it is repaired, quarantined or removed); 7 something could not
be read; 2 ROOT missing.

Flags:
  --name PATTERN   documents are the files named like this (default status.json)
  --kind K         status or json: how every document is checked (default: by name)
  --max-size N     a document larger than N bytes is refused (default 16 MiB; 0 = no limit)
`

const helpList = `Usage: corestate list [--name PATTERN] [--kind K] [--max-size N] [--where FIELD=VALUE[,VALUE...]]... [--fields FIELD,...] [--json] ROOT

Prints the PATH of every document under ROOT (found as fsck finds them; the
walk and the form of PATH are in corestate help) for which every --where
holds, one per line, in the walk's order (names in lexical order, depth
first), followed by the value of each FIELD of --fields, separated by tabs:

  corestate list ws --where status=running,blocked --fields task,pid
  ws/acme/api/fix-42/status.json	fix-42	4242

A --where is set's --if: FIELD=VALUE[,VALUE...] holds if FIELD is one of the
VALUEs (null: absent), FIELD<VALUE (or <=, >, >=) compares numbers, values
compare as JSON values (corestate help set). A value prints as get prints it:
a string raw, anything else as compact JSON, null for a missing field (a
field of status.Status that a status document omits: its zero value);
a string holding a tab, a control character, bytes that are not UTF-8 or
a leading double quote prints JSON-encoded (quoted), and with --json every
string does. list reads without locking, as get does, and changes nothing.
A document that cannot be read (corrupt, refused, unreadable) or whose
field a comparison cannot compare is reported on stderr and left out; the
others are listed, and list then exits with that document's code (3, 5 or 7).

Flags:
  --name PATTERN      documents are the files named like this (default status.json)
  --kind K            status or json: how every document is read (default: by name)
  --max-size N        a document larger than N bytes is refused (default 16 MiB; 0 = no limit)
  --where GUARD       list only the documents where GUARD holds (repeatable)
  --fields F,...      print these top-level fields after PATH
  --json              print string fields JSON-encoded (quoted) too
`

const helpQuarantine = `Usage: corestate quarantine [--timeout D] [--kind K] [--max-size N] FILE

Moves a document that every writer refuses (status.Quarantine: corrupt, or
larger than --max-size) aside, so that work can resume: under the document's
lock, FILE is renamed to FILE.corrupt-<UTC time> (-2, -3... if taken) beside
it, and the move is fsynced. Its bytes are kept as they were; nothing is ever
replaced. Prints the new path. The next writer starts from an empty document.

A FILE that decodes (as get reads it: a registry.json as a JSON object, a
status.json as a status document) is left in place: exit 9. A missing FILE
exits 2; a link, pipe or directory at FILE is not moved (exit 7).

Flags:
  --timeout D    wait at most D for the lock (default 30s; 0 = no limit)
  --kind K       status or json (default: status for a FILE named status.json)
  --max-size N   a FILE larger than N bytes counts as unusable (default 16 MiB)
`

// helpTopics are the commands with help, in the order the package doc
// (generated from this text) shows them.
var helpTopics = []struct{ name, text string }{
	{"get", helpGet},
	{"set", helpSet},
	{"incr", helpIncr},
	{"tx", helpTx},
	{"sweep", helpSweep},
	{"fsck", helpFsck},
	{"list", helpList},
	{"quarantine", helpQuarantine},
	{"reap", helpReap},
	{"owner", helpOwner},
	{"slot", helpSlot},
}

// printHelp writes the help for topic ("" for the overview) and reports
// whether there is such a topic.
func printHelp(w io.Writer, topic string) bool {
	if topic == "" {
		fmt.Fprint(w, helpMain)
		return true
	}
	for _, h := range helpTopics {
		if h.name == topic {
			fmt.Fprint(w, h.text)
			return true
		}
	}
	return false
}
