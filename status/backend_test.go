package status

import (
	"context"
	"errors"
	"iter"
	"os"
	"strings"
	"testing"

	"github.com/agentstate/core/status/internal/filestore"
)

// A Store method that needs an optional method reaches it through its
// interface, whatever the backend's type; a backend without it gets an
// error matching ErrUnsupported (and errors.ErrUnsupported) that names
// what is missing. The control: memBackend, which has only the Backend
// methods, is refused by the same calls that capBackend, the same store
// with Remove and Watch, passes.
func TestOptionalMethods(t *testing.T) {
	ctx := context.Background()
	plain := NewStore[Status]("k", WithBackend(func(string) Backend { return &memBackend{} }))
	first := func(seq iter.Seq2[Entry[Status], error]) (e Entry[Status], err error) {
		for e, err = range seq {
			break
		}
		return e, err
	}
	_, werr := first(plain.Watch(ctx))
	_, qerr := plain.Quarantine(ctx)
	_, txerr := MutateAll(ctx, []AnyStore{plain}, func(*Tx) error { return nil })
	for name, tc := range map[string]struct {
		err  error
		what string
	}{
		"Remove":     {plain.Remove(ctx), "status.RemoveBackend"},
		"Watch":      {werr, "status.WatchBackend"},
		"Quarantine": {qerr, "file backend"},
		"MutateAll":  {txerr, "status.TxBackend"},
	} {
		if !errors.Is(tc.err, ErrUnsupported) || !errors.Is(tc.err, errors.ErrUnsupported) || !strings.Contains(fmtErr(tc.err), tc.what) {
			t.Errorf("%s on a plain backend: %v; want ErrUnsupported naming %s", name, tc.err, tc.what)
		}
	}

	caps := NewStore[Status]("k", WithBackend(func(string) Backend { return &capBackend{} }))
	if _, err := caps.Mutate(ctx, func(s *Status) error { s.Runs = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	e, err := first(caps.Watch(ctx))
	if err != nil || e.Value.Runs != 1 || e.Path != "mem" {
		t.Errorf("Watch through WatchBackend: %+v, %v; want Runs 1 at mem", e, err)
	}
	if err := caps.Remove(ctx); err != nil {
		t.Errorf("Remove through RemoveBackend: %v", err)
	}
	if err := caps.Remove(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second Remove: %v; want os.ErrNotExist", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// capBackend is memBackend with Remove and Watch.
type capBackend struct{ memBackend }

func (b *capBackend) Remove(context.Context) error {
	if b.doc == nil {
		return os.ErrNotExist
	}
	b.doc = nil
	return nil
}

func (b *capBackend) Watch(context.Context) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) { yield(b.doc, nil) }
}

var (
	_ RemoveBackend = (*capBackend)(nil)
	_ WatchBackend  = (*capBackend)(nil)
	_ RemoveBackend = (*filestore.Doc)(nil)
	_ WatchBackend  = (*filestore.Doc)(nil)
)
