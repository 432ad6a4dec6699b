package etcdstore

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/status"
)

// TestWatch: the current state first, then every change in revision order
// (the loop body makes the next change after each event, so nothing is
// timed), a delete, and no goroutine left behind when the loop stops.
func TestWatch(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	cli := newClient(t, endpoint)
	path := docPath(t)
	st := status.NewStore[counter](path, With(cli))
	if _, err := st.Mutate(testCtx(t), func(c *counter) error { c.N = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	watcher := newClient(t, endpoint)
	if _, err := watcher.Get(testCtx(t), "warm-up"); err != nil {
		t.Fatal(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	var seen []int
	var lastRev int64
	for ev, err := range Watch(testCtx(t), watcher, path) {
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		if ev.Key != key(path) || ev.Path != filepath.ToSlash(path) {
			t.Errorf("event for key %q path %q; want %q %q", ev.Key, ev.Path, key(path), path)
		}
		if ev.Revision <= lastRev {
			t.Errorf("revision %d after %d; want increasing", ev.Revision, lastRev)
		}
		lastRev = ev.Revision
		if ev.Deleted {
			seen = append(seen, -1)
			break
		}
		var c counter
		if err := json.Unmarshal(ev.Value, &c); err != nil {
			t.Fatalf("event value %q: %v", ev.Value, err)
		}
		seen = append(seen, c.N)
		if c.N < 3 {
			if _, err := st.Mutate(testCtx(t), func(c *counter) error { c.N++; return nil }); err != nil {
				t.Fatal(err)
			}
		} else if _, err := cli.Delete(testCtx(t), key(path)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{1, 2, 3, -1}; !slices.Equal(seen, want) {
		t.Errorf("watched states %v, want %v (-1 = deleted)", seen, want)
	}
}

// TestWatchDir reports the documents under a directory, at any depth, and
// nothing outside it.
func TestWatchDir(t *testing.T) {
	cli := newClient(t, sharedServer(t).Endpoint())
	root := t.TempDir()
	inside := []string{filepath.Join(root, "ws", "a", "status.json"), filepath.Join(root, "ws", "b", "c", "status.json")}
	outside := filepath.Join(root, "ws2", "status.json") // shares the prefix "ws" as a string
	write := func(p string) {
		if _, err := status.NewStore[counter](p, With(cli)).Mutate(testCtx(t), func(c *counter) error { c.N++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	write(inside[0])
	var got []string
	for ev, err := range WatchDir(testCtx(t), cli, filepath.Join(root, "ws")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Path)
		if len(got) == 2 {
			break
		}
		write(outside) // must not be reported
		write(inside[1])
	}
	want := []string{filepath.ToSlash(inside[0]), filepath.ToSlash(inside[1])}
	if !slices.Equal(got, want) {
		t.Errorf("watched paths %q, want %q", got, want)
	}
}

// TestWatchEnds: the sequence ends quietly when ctx ends, and with an error
// matching ErrClosed when the client is closed.
func TestWatchEnds(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	path := docPath(t)
	t.Run("ctx cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(testCtx(t))
		defer cancel()
		cli := newClient(t, endpoint)
		st := status.NewStore[counter](path, With(cli))
		if _, err := st.Mutate(ctx, func(c *counter) error { c.N = 7; return nil }); err != nil {
			t.Fatal(err)
		}
		events := 0
		for ev, err := range Watch(ctx, cli, path) {
			if err != nil {
				t.Fatalf("Watch after cancel yielded %v; want a quiet end", err)
			}
			events++
			if ev.Value == nil {
				t.Errorf("first event has no value")
			}
			cancel() // the watch is then waiting for changes that never come
		}
		if events != 1 {
			t.Errorf("%d events, want 1", events)
		}
	})
	t.Run("client closed", func(t *testing.T) {
		cli := newClient(t, endpoint)
		st := status.NewStore[counter](path, With(cli))
		if _, err := st.Mutate(testCtx(t), func(c *counter) error { c.N = 8; return nil }); err != nil {
			t.Fatal(err)
		}
		var last error
		for _, err := range Watch(testCtx(t), cli, path) {
			if err != nil {
				last = err
				continue
			}
			cli.Close()
		}
		if !errors.Is(last, ErrClosed) {
			t.Fatalf("Watch on a closed client ended with %v; want ErrClosed", last)
		}
	})
}
