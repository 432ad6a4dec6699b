package main

import (
	"fmt"
	"io"
)

const helpMain = `corestate reads and changes agent status files safely, and shows why.

Usage:
  corestate demo  [--procs N] [--goroutines N] [--updates N] [--readers N] [--dir DIR] [--timeout D]
  corestate get   [--json] [--max-size N] FILE [FIELD]
  corestate set   [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD=VALUE...
  corestate incr  [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD [N]
  corestate tx    [--timeout D] [--max-size N] FILE [OP]... [-- FILE [OP]...]...
  corestate sweep [--older-than D] DIR
  corestate fsck  [--name PATTERN] [--max-size N] ROOT
  corestate quarantine [--timeout D] [--max-size N] FILE
  corestate help  [COMMAND]

Exit codes:
  0    success
  1    usage error
  2    not found (file, directory or field)
  3    corrupt document (left untouched)
  4    timeout (set, incr, tx: lock wait; demo: whole run)
  5    bad field (name or value not accepted)
  6    demo failed (status.Mutate lost an update or saw a torn read)
  7    other error (permission, I/O...)
  8    conflict (an --if did not hold, a cap was reached, or a final status would
       be left); nothing written
  9    not corrupt (quarantine: FILE decodes; nothing moved)
  130  interrupted

fsck exits 3 when a document cannot be used (corrupt, or refused) and 7 when
part of ROOT could not be read; leftovers alone (temp files, lock files without
a document, transaction markers, quarantined copies) exit 0.

Errors are one line on stderr starting with "corestate: ". No colour.
`

const helpDemo = `Usage: corestate demo [flags]

Runs the CONTROL (bare read-modify-write, in-place os.WriteFile, no lock), a
second control with atomic writes but no lock (RMW+rename), and status.Mutate,
one after the other, each with PROCS worker processes of
GOROUTINES goroutines making UPDATES increments each, while READERS goroutines
read the file without a lock. Prints a table with, per side, how it locks and
writes, updates attempted and lost, torn reads by the readers and by the
writers, and updates kept per second. Exits 6 if the status.Mutate side loses
anything or sees a torn read; the controls are expected to lose and are not
judged.

Flags:
  --procs N        worker processes per side (default 4)
  --goroutines N   writer goroutines per process (default 8)
  --updates N      updates per goroutine (default 100)
  --readers N      lock-free reader goroutines per side (default 2)
  --dir DIR        run in DIR and keep the files (default: a temp dir, removed)
  --timeout D      give up after D, killing the workers (default 1m)
`

const helpGet = `Usage: corestate get [--json] [--max-size N] FILE [FIELD]

Prints the document at FILE (laid out as status.Mutate writes it, every value
as the file holds it), or the value of one top-level
FIELD: a string prints raw, anything else as compact JSON. A field of
status.Status that FILE omits prints its zero value; another missing field
exits 2. Takes no lock.

Flags:
  --json         print a string FIELD JSON-encoded (quoted) too
  --max-size N   refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
`

const helpSet = `Usage: corestate set [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD=VALUE...

Applies the assignments under the document's lock (status.Store Mutate) and
prints the committed document. VALUE is JSON if it parses as JSON (runs=3,
note="a b", tags=["x"]), else a plain string (status=running). Fields of
status.Status must fit their type (status: queued, running, completed, blocked,
failed, merged, ready-for-review, rejected); a string field takes VALUE as
written unless it is a JSON string. FIELD=null removes FIELD. Other fields are
kept byte for byte and may be set. updated_at is set to now when anything changes.

Guards are checked under the same lock, before the change: if one does not
hold, nothing is written and set exits 8 (conflict). Several --if must all
hold; one --if holds if FIELD equals any of its comma-separated VALUEs
(status=queued,blocked; a VALUE that is one JSON value is never split).
Values compare as JSON values; null means "absent"; an absent status.Status
field compares as its zero value (runs=0). --if FIELD<VALUE (or <=, >, >=)
compares numbers: VALUE is a number or the name of another field, and an
absent or null field counts as 0 (--if 'active_count<max_concurrent'; quote
it for the shell). Changing status away from a final
state (completed, failed, merged, rejected) also exits 8 unless an --if on
status names that state. A safe claim from a shell:

  corestate set ws/status.json status=running pid=$$ --if status=queued || exit

Flags:
  --timeout D            wait at most D for the lock (default 30s; 0 = no limit)
  --max-size N           refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
  --if FIELD=VALUE,...   change only if FIELD is one of the VALUEs (repeatable)
`

const helpIncr = `Usage: corestate incr [--timeout D] [--max-size N] [--if FIELD=VALUE[,VALUE...]]... FILE FIELD [N]

Adds N (default 1; a negative N goes after --) to the integer FIELD under the
document's lock, in one read-modify-write, and prints the committed document.
An absent or null FIELD counts as 0. A current value that is not an integer,
a field of status.Status that is not an integer, or an overflow exits 5 (bad
field); nothing is written. updated_at is set to now when anything changes.
--if works as for set (exit 8 when a guard does not hold), comparisons too.

Flags:
  --timeout D            wait at most D for the lock (default 30s; 0 = no limit)
  --max-size N           refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
  --if FIELD=VALUE,...   change only if FIELD is one of the VALUEs (repeatable)
`

const helpTx = `Usage: corestate tx [--timeout D] [--max-size N] FILE [OP]... [-- FILE [OP]...]...

Changes several documents in one transaction (status.MutateAll): under all
their locks it checks every guard and applies every change, then writes every
document that changed, all or nothing, even if the process dies half-way.
It prints the committed documents one after another, in the order given.
The OPs of a FILE:

  --if GUARD     as for set, comparisons included
  FIELD=VALUE    as for set (status transitions included)
  FIELD+=N       add N to an integer field, as incr; FIELD-=N subtracts

updated_at is set to now in each document that changes. If a guard does not
hold anywhere, nothing is written and tx exits 8 (conflict). Claim a task and
count it in the registry, refusing at the cap:

  corestate tx registry.json --if 'active_count<max_concurrent' active_count+=1 \
            -- tasks/42/status.json --if status=queued status=running || exit

Flags (before the first FILE):
  --timeout D    wait at most D for the locks (default 30s; 0 = no limit)
  --max-size N   refuse a FILE larger than N bytes (default 16 MiB; 0 = no limit)
`

const helpSweep = `Usage: corestate sweep [--older-than D] DIR

Removes the temp files (".<name>.<16 hex digits>.tmp") that interrupted
writes left in DIR, when older than D, and prints each removed path.

Flags:
  --older-than D   minimum age (default 1h)
`

const helpFsck = `Usage: corestate fsck [--name PATTERN] [--max-size N] ROOT

Checks every document under ROOT, at any depth (directories whose name starts
with "." are not entered, links are not followed), and lists, one per line:

  corrupt      PATH  at byte N: why      (does not decode: every writer refuses it)
  refused      PATH  why                 (too large, not a regular file, or a lock
                                          file that is not a regular file)
  unreadable   PATH  why                 (permission denied, I/O error)
  temp         PATH  age                 (left by an interrupted write; see sweep)
  lock         PATH  no document         (harmless)
  txn          PATH  transaction marker  (the next writer recovers it)
  quarantined  PATH  a copy moved aside by quarantine

Fields are separated by tabs; a PATH with a control character or bytes that
are not UTF-8 is Go-quoted. A last line counts everything. fsck reads without
locking and changes nothing. Documents are the files named like PATTERN,
checked by status.Load's rules (as get reads them).

Exit codes: 0 every document can be used (leftovers may be listed); 3 at
least one corrupt or refused; 7 something could not be read; 2 ROOT missing.

Flags:
  --name PATTERN   documents are the files named like this (default status.json)
  --max-size N     a document larger than N bytes is refused (default 16 MiB; 0 = no limit)
`

const helpQuarantine = `Usage: corestate quarantine [--timeout D] [--max-size N] FILE

Moves a document that every writer refuses (corrupt, or larger than
--max-size) aside, so that work can resume: under the document's lock, FILE
is renamed to FILE.corrupt-<UTC time> (-2, -3... if taken) beside it, and the
move is fsynced. Its bytes are kept as they were; nothing is ever replaced.
Prints the new path. The next writer starts from an empty document.

A FILE that decodes (by status.Load's rules) is left in place: exit 9. A
missing FILE exits 2; a link or special file at FILE is not moved (exit 7).

Flags:
  --timeout D    wait at most D for the lock (default 30s; 0 = no limit)
  --max-size N   a FILE larger than N bytes counts as unusable (default 16 MiB)
`

// printHelp writes the help for topic ("" for the overview) and reports
// whether there is such a topic.
func printHelp(w io.Writer, topic string) bool {
	text, ok := map[string]string{
		"":           helpMain,
		"demo":       helpDemo,
		"get":        helpGet,
		"set":        helpSet,
		"incr":       helpIncr,
		"tx":         helpTx,
		"sweep":      helpSweep,
		"fsck":       helpFsck,
		"quarantine": helpQuarantine,
	}[topic]
	if ok {
		fmt.Fprint(w, text)
	}
	return ok
}
