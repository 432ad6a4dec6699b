package etcdstore

import (
	"context"
	"strings"
	"testing"

	"github.com/agentstate/core/status"
)

// TestErrorsNamePathOnce: an error names the operation and the document
// once, through the Backend and through a Store.
func TestErrorsNamePathOnce(t *testing.T) {
	ctx := context.Background()
	const path = "/srv/other/org/repo/status.json" // outside the root: no key
	opts := []Option{WithRoot("/srv/ws")}
	st := status.NewStore[counter](path, With(nil, opts...))
	for _, tc := range []struct {
		op   string
		call func() error
	}{
		{"key", func() error { _, err := Key(path, opts...); return err }},
		{"load", func() error { _, err := New(nil, path, opts...).Load(ctx); return err }},
		{"load", func() error { _, err := st.Load(ctx); return err }},
		{"update", func() error {
			_, err := st.Mutate(ctx, func(c *counter) error { c.N++; return nil })
			return err
		}},
	} {
		err := tc.call()
		if err == nil {
			t.Errorf("%s: no error", tc.op)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "etcdstore: "+tc.op+" "+path+": ") || strings.Count(msg, path) != 1 {
			t.Errorf("%s: error %q, want the operation and the path once", tc.op, msg)
		}
	}
}
