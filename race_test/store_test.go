package racetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// doc is the workspace status document as the suite's own actors see it:
// the service's status.Status plus a field of the suite's, race_acks, that
// counts the acknowledged updates of every actor. status.Status does not
// declare race_acks, so the status tool (which writes with status.Status,
// like a second service that knows only that type) must keep it without
// knowing it.
type doc struct {
	status.Status
	Acks map[string]int `json:"race_acks,omitempty"`
}

// bump counts one update of actor in the document itself.
func (d *doc) bump(actor string) {
	if d.Acks == nil {
		d.Acks = make(map[string]int)
	}
	d.Acks[actor]++
}

// statusStore is what the workload needs from a status implementation.
// The module's implementation and the bare control run the same workload
// through it.
type statusStore interface {
	// Read returns the document without locking. An error means the
	// reader could not decode what it found (a torn read) or could not
	// read at all.
	Read(path string) (doc, error)
	// Mutate changes the document with fn; if fn returns an error nothing
	// is written and that error is returned.
	Mutate(ctx context.Context, path string, fn func(*doc) error) (doc, error)
	// MutateStatus is Mutate through the 16-field status.Status, which
	// does not know race_acks: the status tool writes this way.
	MutateStatus(ctx context.Context, path string, fn func(*status.Status) error) (status.Status, error)
}

// errTorn marks a read that found a document it could not decode.
var errTorn = errors.New("torn read")

// moduleStore is this module: status.Store / status.Mutate under the
// sidecar flock, atomic durable replace, unknown fields preserved.
type moduleStore struct{}

func (moduleStore) Read(path string) (doc, error) {
	d, err := status.NewStore[doc](path).Load(context.Background())
	if errors.Is(err, status.ErrCorrupt) {
		return d, fmt.Errorf("%w: %w", errTorn, err)
	}
	return d, err
}

func (moduleStore) Mutate(ctx context.Context, path string, fn func(*doc) error) (doc, error) {
	return status.NewStore[doc](path).Mutate(ctx, fn)
}

func (moduleStore) MutateStatus(ctx context.Context, path string, fn func(*status.Status) error) (status.Status, error) {
	return status.Mutate(ctx, path, fn)
}

// bareStore is the unsafe pattern the suite must catch: read the file,
// decode, change, encode, write it back — no lock, so the guard a caller
// checks in fn is checked against a copy that may already be stale when it
// is written back.
//
// inPlace writes with os.WriteFile (truncate, then write: readers can see an
// empty or half file) and lets the status tool's status.Status drop the
// fields it does not know, as the old code did. Without inPlace the write is
// fs.WriteAtomic and unknown fields are kept: only the lock is missing.
type bareStore struct {
	inPlace bool
}

func (b bareStore) name() string {
	if b.inPlace {
		return "bare+os.WriteFile"
	}
	return "bare+fs.WriteAtomic"
}

func (bareStore) Read(path string) (doc, error) {
	var d doc
	_, err := bareRead(path, &d)
	return d, err
}

func (b bareStore) Mutate(ctx context.Context, path string, fn func(*doc) error) (doc, error) {
	var d doc
	raw, err := bareRead(path, &d)
	if err != nil {
		return doc{}, err
	}
	if err := fn(&d); err != nil {
		return doc{}, err
	}
	//statuslint:ignore the control must keep the bug statuslint reports
	return d, b.write(path, &d, raw)
}

func (b bareStore) MutateStatus(ctx context.Context, path string, fn func(*status.Status) error) (status.Status, error) {
	var s status.Status
	raw, err := bareRead(path, &s)
	if err != nil {
		return status.Status{}, err
	}
	if err := fn(&s); err != nil {
		return status.Status{}, err
	}
	if b.inPlace {
		raw = nil // the old second struct: whatever it does not know is gone
	}
	//statuslint:ignore the control must keep the bug statuslint reports
	return s, b.write(path, &s, raw)
}

// bareRead reads and decodes path into v and also returns the document's
// top-level fields, so that a write can keep the ones v does not declare.
func bareRead(path string, v any) (map[string]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // no document yet: the zero value, as the old ReadStatus callers assumed
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errTorn, path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errTorn, path, err)
	}
	return raw, nil
}

// write encodes v over the fields of raw (so fields v does not declare
// survive) and writes the result without any lock.
func (b bareStore) write(path string, v any, raw map[string]json.RawMessage) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if raw != nil {
		var known map[string]json.RawMessage
		if err := json.Unmarshal(data, &known); err != nil {
			return err
		}
		// Drop every field v declares first: an omitempty field that fn
		// cleared must not come back from the old copy.
		for _, k := range declared(reflect.TypeOf(v).Elem()) {
			delete(raw, k)
		}
		for k, val := range known {
			raw[k] = val
		}
		if data, err = json.Marshal(raw); err != nil {
			return err
		}
	}
	if b.inPlace {
		return os.WriteFile(path, data, 0o644)
	}
	return fs.WriteAtomic(path, data, 0o644)
}

// declared lists the JSON names of the fields of struct type t, following
// embedded structs.
func declared(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			names = append(names, declared(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}
