package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentstate/core/status/internal/filestore"
)

// An AnyStore is a *Store of any document type, as [MutateAll] and [LoadAll]
// take several of them. Only Stores implement it.
type AnyStore interface {
	Name() string
	base() *store // nil for a nil Store
	open(cur []byte) (txValue, error)
}

// A TxBackend is a [Backend] that can also change several of its documents
// in one all-or-nothing step. [MutateAll], [LoadAll] and [TransformAll]
// use it, with the etcd backend (status/etcdstore); the file backend has
// its own.
type TxBackend interface {
	Backend
	// UpdateAll is Update over docs, Backends of the receiver's kind with
	// the receiver among them: apply gets their encodings in order (nil if
	// missing) and returns the new ones (cur[i] itself if unchanged). Every
	// changed document is stored durably, or none is, also across a crash;
	// Update's rules for apply and ctx hold.
	UpdateAll(ctx context.Context, docs []Backend, apply func(cur [][]byte) ([][]byte, error)) error
}

// A Tx holds the documents of one transaction, as its function sees and
// changes them (see [MutateAll]), or as they were read together ([LoadAll]).
// [Store.In] returns one of them.
type Tx struct {
	docs []AnyStore
	vals []txValue
	err  error // the first misuse of In; the transaction fails with it
}

// In returns the document of s in tx: inside a [MutateAll] function, the
// value to read and change; afterwards, the document as committed or read.
// s must be one of tx's Stores, or one of the same type and name. Otherwise
// (or for a nil s or tx) In returns an error naming s that matches
// [os.ErrInvalid], with a pointer to a zero T that nothing reads, and the
// transaction fails with that error whatever fn returns: a document left
// out of the transaction is reported where it is asked for, and never
// changed as if it were in it. [MutateAll2] and [MutateAll3] hand their
// function its documents instead, with no In to get wrong.
func (s *Store[T]) In(tx *Tx) (*T, error) {
	switch {
	case tx == nil:
		return new(T), pathError("in", storeName(s), fmt.Errorf("%w: nil Tx", os.ErrInvalid))
	case s == nil:
		return new(T), tx.fail(pathError("in", "", fmt.Errorf("%w: nil Store", os.ErrInvalid)))
	}
	for i, d := range tx.docs {
		if d == AnyStore(s) {
			return tx.vals[i].(*docValue[T]).ptr(), nil
		}
	}
	for i, d := range tx.docs {
		if d.Name() != s.Name() {
			continue
		}
		if v, ok := tx.vals[i].(*docValue[T]); ok {
			return v.ptr(), nil
		}
		return new(T), tx.fail(pathError("in", s.Name(), fmt.Errorf("%w: the transaction holds it as another document type", os.ErrInvalid)))
	}
	return new(T), tx.fail(pathError("in", s.Name(), fmt.Errorf("%w: not a document of the transaction (%s)", os.ErrInvalid, docNames(tx.docs))))
}

// fail records err as the transaction's failure, unless one came first,
// and returns it.
func (tx *Tx) fail(err error) error {
	if tx.err == nil {
		tx.err = err
	}
	return err
}

func storeName[T any](s *Store[T]) string {
	if s == nil {
		return ""
	}
	return s.Name()
}

// MutateAll runs fn on several documents under all their locks and commits
// every change fn made, all or nothing (the package doc's Transactions), and
// returns them as committed. An error matching [fs.ErrDurabilityUnknown]
// means the transaction is committed but an I/O error interrupted its
// installation or last sync: every later locker sees it complete. Documents
// that are not distinct, non-nil and kept by one [TxBackend] fail with
// [os.ErrInvalid], changing nothing.
func MutateAll(ctx context.Context, docs []AnyStore, fn func(*Tx) error) (*Tx, error) {
	if fn == nil {
		return nil, pathError("mutate all", docNames(docs), errNilFunc)
	}
	return updateAll(ctx, "mutate all", docs, fn)
}

// MutateAll2 is [MutateAll] over two documents, handed to fn as values to
// read and change, and returned as committed:
//
//	r, t, err := status.MutateAll2(ctx, reg, task, func(r *Registry, t *status.Status) error {
//		r.Active++
//		return t.Transition(status.Running, status.Queued)
//	})
func MutateAll2[A, B any](ctx context.Context, a *Store[A], b *Store[B], fn func(*A, *B) error) (A, B, error) {
	var ra A
	var rb B
	if fn == nil {
		return ra, rb, pathError("mutate all", docNames([]AnyStore{a, b}), errNilFunc)
	}
	tx, err := updateAll(ctx, "mutate all", []AnyStore{a, b}, func(tx *Tx) error {
		return fn(txDoc[A](tx, 0), txDoc[B](tx, 1))
	})
	if err != nil {
		return ra, rb, err
	}
	return *txDoc[A](tx, 0), *txDoc[B](tx, 1), nil
}

// MutateAll3 is [MutateAll2] over three documents.
func MutateAll3[A, B, C any](ctx context.Context, a *Store[A], b *Store[B], c *Store[C], fn func(*A, *B, *C) error) (A, B, C, error) {
	var ra A
	var rb B
	var rc C
	if fn == nil {
		return ra, rb, rc, pathError("mutate all", docNames([]AnyStore{a, b, c}), errNilFunc)
	}
	tx, err := updateAll(ctx, "mutate all", []AnyStore{a, b, c}, func(tx *Tx) error {
		return fn(txDoc[A](tx, 0), txDoc[B](tx, 1), txDoc[C](tx, 2))
	})
	if err != nil {
		return ra, rb, rc, err
	}
	return *txDoc[A](tx, 0), *txDoc[B](tx, 1), *txDoc[C](tx, 2), nil
}

// txDoc is the i-th document of tx, a Store[T]'s.
func txDoc[T any](tx *Tx, i int) *T { return tx.vals[i].(*docValue[T]).ptr() }

// LoadAll reads several documents as they were at one moment, never part of
// a transaction: under their locks, after completing any transaction a crash
// left on them. Read them with [Store.In] on the returned [Tx].
func LoadAll(ctx context.Context, docs ...AnyStore) (*Tx, error) {
	return updateAll(ctx, "load all", docs, nil)
}

// updateAll is [MutateAll], and [LoadAll] when fn is nil.
func updateAll(ctx context.Context, op string, docs []AnyStore, fn func(*Tx) error) (*Tx, error) {
	update, err := txUpdate(docs, op)
	if err == nil && ctx == nil {
		err = errNilContext
	}
	if err != nil {
		return nil, pathError(op, docNames(docs), err)
	}
	var result *Tx
	err = update(ctx, func(cur [][]byte) ([][]byte, error) {
		tx := &Tx{docs: docs, vals: make([]txValue, len(docs))}
		for i, d := range docs {
			v, err := d.open(cur[i])
			if err != nil {
				return nil, err
			}
			tx.vals[i] = v
		}
		if fn == nil {
			result = tx
			return cur, nil
		}
		err := fn(tx)
		if tx.err != nil && (err == nil || !errors.Is(err, tx.err)) {
			// fn dropped In's error: the misuse is what failed.
			return nil, tx.err
		}
		if err != nil {
			return nil, err
		}
		out := make([][]byte, len(docs))
		now := sync.OnceValue(utcNow) // one time for every document
		for i, v := range tx.vals {
			var err error
			if out[i], err = v.encode(cur[i], now); err != nil {
				return nil, err
			}
		}
		result = tx
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// txUpdate checks the documents of a transaction and returns the call
// that commits it (see commitAll).
func txUpdate(docs []AnyStore, op string) (func(ctx context.Context, apply func(cur [][]byte) ([][]byte, error)) error, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: no documents", os.ErrInvalid)
	}
	ss := make([]*store, len(docs))
	for i, d := range docs {
		if ss[i] = anyBase(d); ss[i] == nil {
			return nil, fmt.Errorf("%w: document %d is nil", os.ErrInvalid, i)
		}
	}
	return commitAll(op, ss)
}

// commitAll returns the call that commits a transaction over ss, which
// are not empty: filestore.UpdateAll for files, else the first backend's
// UpdateAll.
func commitAll(op string, ss []*store) (func(ctx context.Context, apply func(cur [][]byte) ([][]byte, error)) error, error) {
	if ss[0].file != nil {
		files := make([]*filestore.Doc, len(ss))
		for i, s := range ss {
			if files[i] = s.file; s.file == nil {
				return nil, fmt.Errorf("%w: %s is not a file (one transaction cannot mix backends)", os.ErrInvalid, s.b.Name())
			}
		}
		return func(ctx context.Context, apply func(cur [][]byte) ([][]byte, error)) error {
			return filestore.UpdateAll(ctx, op, files, apply)
		}, nil
	}
	tb, ok := ss[0].b.(TxBackend)
	if !ok {
		return nil, unsupported("it is not a status.TxBackend")
	}
	bs := make([]Backend, len(ss))
	for i, s := range ss {
		bs[i] = s.b
	}
	return func(ctx context.Context, apply func(cur [][]byte) ([][]byte, error)) error {
		return tb.UpdateAll(ctx, bs, apply)
	}, nil
}

// anyBase returns d's store, or nil for a nil d.
func anyBase(d AnyStore) *store {
	if d == nil {
		return nil
	}
	return d.base()
}

// docNames names the documents of a transaction in errors.
func docNames(docs []AnyStore) string {
	ss := make([]*store, len(docs))
	for i, d := range docs {
		ss[i] = anyBase(d)
	}
	return storeNames(ss)
}

// storeNames is docNames for stores (nil for a nil document).
func storeNames(ss []*store) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = "<nil>"
		if s != nil {
			names[i] = s.b.Name()
		}
	}
	return strings.Join(names, ", ")
}

func (s *Store[T]) base() *store {
	if s == nil {
		return nil
	}
	return &s.store
}

// A txValue is one document of a transaction, decoded.
type txValue interface {
	// encode returns the document's new encoding, or cur if fn left it
	// unchanged; a changed Stamper is stamped with now().
	encode(cur []byte, now func() time.Time) ([]byte, error)
}

type docValue[T any] struct {
	s       *Store[T]
	v       T
	unknown map[string]json.RawMessage
	before  []byte // compact encoding as read
}

func (d *docValue[T]) ptr() *T { return &d.v }

func (s *Store[T]) open(cur []byte) (txValue, error) {
	d, err := s.value(cur)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// value decodes cur as fn is to see it (see current).
func (s *Store[T]) value(cur []byte) (docValue[T], error) {
	v, unknown, before, err := s.current(cur)
	return docValue[T]{s: s, v: v, unknown: unknown, before: before}, err
}

func utcNow() time.Time { return time.Now().UTC() }

// encode is the write half of [Mutate]'s read-modify-write.
func (d *docValue[T]) encode(cur []byte, now func() time.Time) ([]byte, error) {
	after, err := d.s.codec.Marshal(&d.v)
	if err != nil {
		return nil, fmt.Errorf("status: encode %s: %w", d.s.b.Name(), err)
	}
	if bytes.Equal(d.before, after) {
		return cur, nil
	}
	if st, ok := any(&d.v).(Stamper); ok {
		st.Stamp(now())
		if after, err = d.s.codec.Marshal(&d.v); err != nil {
			return nil, fmt.Errorf("status: encode %s: %w", d.s.b.Name(), err)
		}
	}
	out := d.s.codec.Encode(after, d.unknown)
	d.s.codec.Remember(out, &d.v, d.unknown, after)
	return out, nil
}
