package config_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/internal/deepdiff"
)

type recorder struct {
	mu   sync.Mutex
	got  []string // "key1,key2" per call
	news []int64  // New.Int64("n") per call
}

func (r *recorder) fn(ch config.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, strings.Join(ch.Keys, ","))
	r.news = append(r.news, ch.New.Int64("n"))
}

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func TestOnChangeOncePerRealChange(t *testing.T) {
	c := config.New()
	var all, db, host, other recorder
	c.OnChange(all.fn)
	c.OnChange(db.fn, "db")
	c.OnChange(host.fn, "db.host", "db.host") // duplicates collapse
	c.OnChange(other.fn, "other")

	mustSet(t, c, "db", map[string]any{"host": "a", "port": 1})
	mustSet(t, c, "db", map[string]any{"host": "a", "port": 1}) // equal: no change
	mustSet(t, c, "db.port", 2)
	mustSet(t, c, "db.host", "b")
	mustSet(t, c, "list", []any{1.5, map[string]any{"a": 1}})
	mustSet(t, c, "list", []any{1.5, map[string]any{"a": 1}}) // deeply equal: no change
	c.Delete("db.host")
	c.Delete("db.host") // nothing to delete

	check := func(name string, r *recorder, want []string) {
		t.Helper()
		if diff := deepdiff.Diff(want, r.calls()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	check("all", &all, []string{"db.host,db.port", "db.port", "db.host", "list", "db.host"})
	check("db", &db, []string{"db", "db", "db", "db"})
	check("db.host", &host, []string{"db.host", "db.host", "db.host"})
	check("other", &other, nil)
}

func TestOnChangeCancel(t *testing.T) {
	c := config.New()
	var r recorder
	cancel := c.OnChange(r.fn)
	mustSet(t, c, "a", 1)
	cancel()
	cancel() // idempotent
	mustSet(t, c, "a", 2)
	if got := len(r.calls()); got != 1 {
		t.Fatalf("calls after cancel: %d, want 1", got)
	}
	c.OnChange(nil)() // a nil callback is ignored, its cancel works
}

// A callback that writes must not deadlock; its write is delivered after
// it returns, in publication order.
func TestOnChangeReentrantSetIsOrdered(t *testing.T) {
	c := config.New()
	var r recorder
	c.OnChange(func(ch config.Change) {
		if n := ch.New.Int64("n"); n < 5 {
			mustSet(t, c, "n", n+1)
			// Our nested write is published but not yet delivered.
			if c.Snapshot().Int64("n") != n+1 {
				t.Errorf("nested Set not visible")
			}
		}
	})
	c.OnChange(r.fn, "n")
	cancelSelf := func() {}
	cancelSelf = c.OnChange(func(config.Change) { cancelSelf() }) // cancel from inside
	mustSet(t, c, "n", 1)
	if diff := deepdiff.Diff([]int64{1, 2, 3, 4, 5}, r.news); diff != "" {
		t.Fatalf("delivery order (-want +got):\n%s", diff)
	}
}

// A panicking callback does not wedge delivery: the next write delivers.
func TestOnChangePanicKeepsDelivering(t *testing.T) {
	c := config.New()
	var r recorder
	boom := true
	c.OnChange(func(config.Change) {
		if boom {
			boom = false
			panic("boom")
		}
	})
	c.OnChange(r.fn, "n")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic did not reach the writer")
			}
		}()
		mustSet(t, c, "n", 1)
	}()
	mustSet(t, c, "n", 2)
	if diff := deepdiff.Diff([]int64{2}, r.news); diff != "" {
		// The change to 1 was being delivered when the first callback
		// panicked; it is dropped for the rest of that delivery.
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestOnChangeLoadIsOneChange(t *testing.T) {
	c := config.New()
	if err := c.Load(strings.NewReader(`{"keep": 1, "drop": 1}`)); err != nil {
		t.Fatal(err)
	}
	var r recorder
	c.OnChange(r.fn)
	if err := c.Load(strings.NewReader(`{"keep": 1, "new": {"x": true}}`)); err != nil {
		t.Fatal(err)
	}
	if diff := deepdiff.Diff([]string{"drop,new.x"}, r.calls()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
