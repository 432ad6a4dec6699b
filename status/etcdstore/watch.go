package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// An Event is one state of a watched document.
type Event struct {
	// Path is the document's path on this host: with [WithRoot], the root
	// joined with the document's name; otherwise the slash-separated
	// absolute path (the key without the prefix).
	Path string
	// Key is the document's etcd key.
	Key string
	// Value is the encoded document; nil if Deleted.
	Value []byte
	// Deleted reports that the key was deleted.
	Deleted bool
	// Revision is the etcd revision of this state (the key's ModRevision,
	// or the revision of the delete). It grows with every change.
	Revision int64
}

// Watch follows the document at path. The sequence first yields its
// current state (nothing if it does not exist), then every later change in
// revision order, with no gap between the two. It ends when ctx ends or the
// loop stops; after a failure (revisions compacted away, client closed) it
// yields one error and ends. It starts no goroutine of its own, and the
// client's watch stream is released when the sequence ends.
//
//	for ev, err := range etcdstore.Watch(ctx, cli, path) {
//		if err != nil { ... }
//		var doc status.Status
//		_ = json.Unmarshal(ev.Value, &doc)
//	}
func Watch(ctx context.Context, cli *clientv3.Client, path string, opts ...Option) iter.Seq2[Event, error] {
	c := newConfig(opts)
	key, err := c.key(path)
	return watch(ctx, cli, &c, path, key, err, false)
}

// Watch follows the document as [Watch] does, for [status.Store.Watch]: it
// yields the encoded document, nil once the key is deleted, and ends after
// an error.
func (b *Backend) Watch(ctx context.Context) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for ev, err := range watch(ctx, b.cli, &b.cfg, b.path, b.key, b.err, false) {
			if !yield(ev.Value, err) {
				return
			}
		}
	}
}

// WatchDir is [Watch] for every document under the directory dir (at any
// depth), in revision order across documents.
func WatchDir(ctx context.Context, cli *clientv3.Client, dir string, opts ...Option) iter.Seq2[Event, error] {
	c := newConfig(opts)
	key, err := c.dirKey(dir)
	return watch(ctx, cli, &c, dir, key, err, true)
}

// watch follows key (a prefix if isDir); keyErr, if set, is why path has
// no key, and the only thing yielded.
func watch(parent context.Context, cli *clientv3.Client, c *config, path, key string, keyErr error, isDir bool) iter.Seq2[Event, error] {
	var kopts []clientv3.OpOption
	if isDir {
		kopts = append(kopts, clientv3.WithPrefix())
	}
	fail := func(err error) error {
		if cli != nil && cli.Ctx().Err() != nil {
			err = fmt.Errorf("%w: %v", ErrClosed, err)
		}
		return fmt.Errorf("etcdstore: watch %s: %w", key, err)
	}
	event := func(kv *mvccpb.KeyValue, deleted bool, rev int64) Event {
		k := string(kv.Key)
		ev := Event{Key: k, Path: c.path(strings.TrimPrefix(k, c.prefix)), Deleted: deleted, Revision: rev}
		if !deleted {
			ev.Value = kv.Value
			if ev.Value == nil {
				ev.Value = []byte{}
			}
		}
		return ev
	}
	return func(yield func(Event, error) bool) {
		switch {
		case keyErr != nil:
			yield(Event{}, fmt.Errorf("etcdstore: watch %s: %w", path, keyErr))
			return
		case cli == nil:
			yield(Event{}, fmt.Errorf("etcdstore: watch %s: %w", key, errNilClient))
			return
		case parent == nil:
			yield(Event{}, fmt.Errorf("etcdstore: watch %s: %w: context", key, errNilArg))
			return
		}
		// Cancelling our own ctx when the loop stops early is what ends
		// the client's watcher for this call.
		ctx, cancel := context.WithCancel(parent)
		defer cancel()
		resp, err := cli.Get(ctx, key, kopts...)
		if err != nil {
			if parent.Err() == nil {
				yield(Event{}, fail(err))
			}
			return
		}
		for _, kv := range resp.Kvs {
			if !yield(event(kv, false, kv.ModRevision), nil) {
				return
			}
		}
		wopts := append(kopts, clientv3.WithRev(resp.Header.Revision+1))
		for wr := range cli.Watch(ctx, key, wopts...) {
			if err := wr.Err(); err != nil {
				if parent.Err() == nil {
					yield(Event{}, fail(err))
				}
				return
			}
			for _, e := range wr.Events {
				// A delete's Kv is a tombstone whose ModRevision is the
				// revision of the delete.
				if !yield(event(e.Kv, e.Type == mvccpb.DELETE, e.Kv.ModRevision), nil) {
					return
				}
			}
		}
		// The channel closes without an error when ctx ends or the client
		// is closed; only the second is news to the caller.
		if parent.Err() == nil {
			yield(Event{}, fail(errors.New("watch channel closed")))
		}
	}
}
