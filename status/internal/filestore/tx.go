package filestore

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstate/core/status/internal/journal"
)

// A txPart is one document of a transaction.
type txPart struct {
	d    *Doc
	idx  int    // position in the caller's list
	key  string // docPath
	e    *entry
	turn *request // the transaction's place in e's queue, and the calls that joined it
	h    *lockHandle
	id   fileID
	orig []byte
	cur  []byte
}

// UpdateAll is Update over docs, all or nothing (status.TxBackend's
// UpdateAll on documents kept in files); op names the call in errors
// ("mutate all", or "load all" for status.LoadAll).
//
// In this process, the transaction takes its turn in each document's
// queue, in the order of the documents' paths, as an Update call does; it
// never joins a batch led by an Update call. Holding every turn, it opens
// the lock files and takes their flocks in the order of their identities
// (device, inode), which is the same in every process whatever path spells
// a file. Then it completes any transaction a crashed process left
// (recoverDoc), reads every document, runs apply, and lets the Update
// calls and the transactions (see joins) queued behind its turns apply
// their functions to its result, so that one commit writes them all. A
// commit that changes one document writes it as Update would; two or more
// go through journal.Commit.
func UpdateAll(ctx context.Context, op string, docs []*Doc, apply func(cur [][]byte) ([][]byte, error)) error {
	parts, err := txParts(docs)
	if err != nil {
		return Error(op, docNames(docs), err)
	}
	if err := ctx.Err(); err != nil {
		return Error(op, docNames(docs), err)
	}
	for _, p := range parts {
		p.e = acquire(p.key)
	}
	defer func() {
		for _, p := range parts {
			release(p.e)
		}
	}()
	join := &txJoin{parts: parts, n: len(docs), apply: apply}
	if t := takeTurns(ctx, op, parts, join); t != nil {
		// ctx ended, or the transaction ahead committed this one (see
		// joins): its outcome is this call's.
		return t.ended()
	}
	t := observedClock(parts)
	if p, err := lockAll(ctx, parts); err != nil {
		giveBackTurns(parts)
		return Error(op, p.d.path, err)
	}
	return runTx(parts, len(docs), apply, since(t))
}

// txParts checks the documents of a transaction and returns them in the
// order of their paths.
func txParts(docs []*Doc) ([]*txPart, error) {
	parts := make([]*txPart, len(docs))
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("%w: document %d is nil", os.ErrInvalid, i)
		}
		key, err := docPath(d.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.path, err)
		}
		if !utf8.ValidString(key) || strings.ContainsRune(key, '\n') {
			// The journal names documents in JSON, which holds only
			// UTF-8, and recovery refuses a name with a newline.
			return nil, fmt.Errorf("%w: %q: a transaction's document paths must be valid UTF-8, without a newline", os.ErrInvalid, key)
		}
		parts[i] = &txPart{d: d, idx: i, key: key}
	}
	slices.SortFunc(parts, func(a, b *txPart) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(parts); i++ {
		if parts[i].key == parts[i-1].key {
			return nil, fmt.Errorf("%w: %s is in the transaction twice", os.ErrInvalid, parts[i].d.path)
		}
	}
	return parts, nil
}

// docNames names the documents of a transaction in its errors.
func docNames(docs []*Doc) string {
	names := make([]string, len(docs))
	for i, d := range docs {
		if d == nil {
			names[i] = "<nil>"
		} else {
			names[i] = d.Name()
		}
	}
	return strings.Join(names, ", ")
}

// takeTurns queues the transaction on each entry, in order, and waits
// until it heads each queue. If a turn ends first (ctx), it gives back the
// turns it has and returns the turn that ended. The first turn carries
// join, so that a transaction ahead whose documents include all of these
// may commit this one with its own; that turn then ends too.
func takeTurns(ctx context.Context, op string, parts []*txPart, join *txJoin) (ended *request) {
	for i, p := range parts {
		var held bool
		if p.turn, held = queueTurn(ctx, op, p.d, p.e, join); !held {
			giveBackTurns(parts[:i])
			return p.turn
		}
		join = nil
	}
	return nil
}

// A txJoin is what a leader needs to commit a transaction whose first
// turn waits in one of its queues: its documents and its apply.
type txJoin struct {
	parts []*txPart
	n     int
	apply func(cur [][]byte) ([][]byte, error)
}

// joins reports whether j, queued on one of parts' entries, is a
// transaction that the holder of parts' turns may commit: one whose
// documents are all among parts, with the same options (it then holds no
// turn: the leader holds them all, so it waits at its first).
func joins(j *txJoin, parts []*txPart) bool {
	if s := TestSeams(); s != nil && s.NoJoin {
		return false
	}
	for _, jp := range j.parts {
		if !slices.ContainsFunc(parts, func(p *txPart) bool { return p.e == jp.e && sameOptions(p.d, jp.d) }) {
			return false
		}
	}
	return true
}

// joinTx runs j's transaction, which joined the batch of parts, on their
// current documents, and takes its changes. It runs on j's own goroutine.
func joinTx(j *txJoin, parts []*txPart) error {
	cur := make([][]byte, j.n)
	of := make([]*txPart, j.n)
	for _, jp := range j.parts {
		i := slices.IndexFunc(parts, func(p *txPart) bool { return p.e == jp.e })
		cur[jp.idx], of[jp.idx] = parts[i].cur, parts[i]
	}
	out, err := j.apply(cur)
	if err == nil {
		err = checkOut(out, cur, j.parts)
	}
	if err != nil {
		return err
	}
	for i, p := range of {
		p.cur = out[i]
	}
	return nil
}

// checkOut checks the result of a transaction's apply: one document for
// each, none removed.
func checkOut(out, cur [][]byte, parts []*txPart) error {
	if len(out) != len(cur) {
		return fmt.Errorf("status: mutate all: apply returned %d documents for %d", len(out), len(cur))
	}
	for _, p := range parts {
		if out[p.idx] == nil && cur[p.idx] != nil {
			return fmt.Errorf("status: mutate all %s: a transaction cannot remove a document", p.d.path)
		}
	}
	return nil
}

// queueTurn queues a turn on e for a transaction's document and waits
// until it heads the queue (true). It returns false if the turn ended
// first: its ctx ended, or a transaction ahead committed join, the
// transaction this turn opens (see joins); ended then says how.
func queueTurn(ctx context.Context, op string, d *Doc, e *entry, join *txJoin) (*request, bool) {
	r := newRequest(d, e, "", ctx)
	r.txOp = op
	r.tx = join
	return r, e.enqueue(r) || e.wait(r)
}

// ended returns the error of a turn that ended without being held, and
// re-raises the panic of a joined transaction's function.
func (r *request) ended() error {
	r.raise()
	return r.err
}

// raise re-raises the panic of r's function, if it panicked.
func (r *request) raise() {
	if r.panicked {
		panic(r.panicVal)
	}
}

// runOwn runs fn, the turn holder's own change, on the current goroutine,
// as an observed function; a panic is recorded for raise.
func (r *request) runOwn(fn func() error) error {
	r.apply = func([]byte) ([]byte, error) { return nil, fn() }
	_, err := r.run(nil)
	return err
}

// applyBatch applies the calls of r's batch after r's own, in order, to
// *cur. A transaction among them runs through runTx on its own goroutine;
// it changes *cur itself (and its other documents) on success.
func (r *request) applyBatch(cur *[]byte, runTx func(j *txJoin) error) {
	for _, q := range r.batch {
		switch {
		case q == r:
		case q.tx != nil:
			q.apply = func([]byte) ([]byte, error) { return nil, runTx(q.tx) }
			q.e.applyOne(r, q, nil)
		default:
			*cur = q.e.applyOne(r, q, *cur)
		}
	}
}

// giveBackTurns passes the lead of each entry the transaction heads to the
// next caller, for a transaction that ends before it took any batch.
func giveBackTurns(parts []*txPart) {
	for _, p := range parts {
		p.turn.giveBack(nil)
	}
}

// lockAll takes the flock of every document, in the order of the lock
// files' identities. If a lock file turns out to have been replaced
// (deleted and created anew) while it waited, the order may have changed:
// it releases every lock and starts over. On failure it returns the
// document whose lock was not taken.
func lockAll(ctx context.Context, parts []*txPart) (*txPart, error) {
	for {
		for _, p := range parts {
			h, err := openLock(p.key+LockSuffix, p.d.perm)
			if err == nil {
				p.h = h
				p.id, err = h.id()
			}
			if err != nil {
				closeLocks(parts)
				return p, err
			}
		}
		order := slices.Clone(parts)
		slices.SortFunc(order, func(a, b *txPart) int {
			return cmp.Or(cmp.Compare(a.id.dev, b.id.dev), cmp.Compare(a.id.ino, b.id.ino))
		})
		for i := 1; i < len(order); i++ {
			if order[i].id == order[i-1].id {
				closeLocks(parts)
				return order[i], fmt.Errorf("%w: it is the same file as %s", os.ErrInvalid, order[i-1].d.path)
			}
		}
		moved := false
		for _, p := range order {
			err := p.h.lock(ctx)
			if err != nil {
				p.h = nil // closed by lock
				closeLocks(parts)
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				return p, err
			}
			id, err := p.h.id()
			if err != nil {
				closeLocks(parts)
				return p, err
			}
			if id != p.id {
				moved = true
				break
			}
		}
		if !moved {
			return nil, nil
		}
		closeLocks(parts)
	}
}

func closeLocks(parts []*txPart) {
	for _, p := range parts {
		if p.h != nil {
			p.h.close()
			p.h = nil
		}
	}
}

// runTx runs a transaction whose turns and locks are held: it reads the
// documents, applies the transaction and the calls that join it, commits,
// releases the locks and hands each entry on.
func runTx(parts []*txPart, n int, apply func(cur [][]byte) ([][]byte, error), lock time.Duration) error {
	for _, p := range parts {
		var err error
		if p.orig, _, err = p.turn.read(); err != nil {
			closeLocks(parts)
			giveBackTurns(parts)
			return err
		}
	}
	if err := oneFileEach(parts); err != nil {
		closeLocks(parts)
		giveBackTurns(parts)
		return err
	}
	taken, completed := false, false
	defer func() {
		closeLocks(parts)
		if !taken {
			giveBackTurns(parts) // apply called runtime.Goexit
			return
		}
		for _, p := range parts {
			p.turn.finish(!completed)
		}
	}()

	lead := parts[0].turn
	out, err := runApply(lead, parts, n, apply)
	// The Mutate calls queued meanwhile join: they come after the
	// transaction, as they came after it.
	// So do the transactions whose documents are all among these: their
	// first turn waits in one of these queues.
	for _, p := range parts {
		p.turn.takeBatch(func(j *txJoin) bool { return joins(j, parts) }, lock)
	}
	taken = true
	ok := err == nil && !lead.panicked
	for _, p := range parts {
		p.cur = p.orig
		if ok {
			p.cur = out[p.idx]
		}
	}
	for _, p := range parts {
		p.turn.applyBatch(&p.cur, func(j *txJoin) error { return joinTx(j, parts) })
	}
	if names, werr := tracedCommit(parts); werr != nil {
		for _, p := range parts {
			p.turn.failWrite(werr)
		}
		if ok {
			err = Error(lead.opName(), names, werr)
		}
	}
	completed = true
	lead.raise()
	return err
}

// runApply runs the transaction's apply on the documents as read, in the
// caller's goroutine, and checks its result.
func runApply(lead *request, parts []*txPart, n int, apply func(cur [][]byte) ([][]byte, error)) ([][]byte, error) {
	cur := make([][]byte, n)
	for _, p := range parts {
		cur[p.idx] = p.orig
	}
	var out [][]byte
	err := lead.runOwn(func() (err error) {
		out, err = apply(cur)
		return err
	})
	if err != nil || lead.panicked {
		return nil, err
	}
	return out, checkOut(out, cur, parts)
}

// oneFileEach refuses documents of which two are one file (hard links, or
// a name that another document's lock file did not catch): a commit would
// give each name a new file of its own, splitting them. The locks are held.
func oneFileEach(parts []*txPart) error {
	if s := TestSeams(); s != nil && s.SplitLinks {
		return nil
	}
	seen := make([]os.FileInfo, 0, len(parts))
	var of []*txPart
	for _, p := range parts {
		fi, err := os.Lstat(p.key)
		if err != nil || !fi.Mode().IsRegular() {
			continue // missing: read found none; not regular: read refused it
		}
		for i, prev := range seen {
			if os.SameFile(prev, fi) {
				return Error(p.turn.opName(), p.d.path, fmt.Errorf("%w: it is the same file as %s (a hard link)", os.ErrInvalid, of[i].d.path))
			}
		}
		seen, of = append(seen, fi), append(of, p)
	}
	return nil
}

// observedClock returns the time if any of the transaction's documents
// has observed calls, else zero.
func observedClock(parts []*txPart) time.Time {
	for _, p := range parts {
		if t := p.e.clock(); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// tracedCommit is commitParts, recording its duration in the observed
// calls that joined the commit.
func tracedCommit(parts []*txPart) (string, error) {
	t := observedClock(parts)
	names, err := commitParts(parts)
	if d := since(t); d > 0 {
		for _, p := range parts {
			p.turn.traceWrite(d)
		}
	}
	return names, err
}

// commitParts writes the documents that changed: one as Update does, more
// with journal.Commit. It returns their names, for errors.
func commitParts(parts []*txPart) (string, error) {
	var ws []journal.Write
	var names []string
	for _, p := range parts {
		if !unchanged(p.cur, p.orig) {
			ws = append(ws, journal.Write{Path: p.key, Data: p.cur, Before: p.orig, Perm: p.d.perm, Limit: p.d.maxSize})
			names = append(names, p.d.path)
		}
	}
	switch len(ws) {
	case 0:
		return "", nil
	case 1:
		return names[0], writeFile(ws[0].Path, ws[0].Data, ws[0].Perm)
	}
	return listNames(names), journal.Commit(ws)
}

// listNames names the documents of a commit in its error: the first three,
// then how many more.
func listNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d other documents", strings.Join(names[:3], ", "), len(names)-3)
}
