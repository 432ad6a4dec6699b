package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentstate/core/status"
)

// A kind says which rules a document follows. A status document
// (status.StatusDocument) has status.Status's field types, its layout, the
// transition rule of its status and an updated_at stamped on each change;
// any other document is a JSON object (status.Document) with no rule about
// its members. A file named status.json is a status document, any other
// name is not, unless --kind says otherwise.
type kind int

const (
	kindByName kind = iota // the zero value: decided by the file's name
	kindStatus
	kindJSON
)

// String and Set make a kind the value of the --kind flag.
func (k *kind) String() string {
	switch *k {
	case kindStatus:
		return "status"
	case kindJSON:
		return "json"
	}
	return ""
}

func (k *kind) Set(s string) error {
	switch s {
	case "status":
		*k = kindStatus
	case "json":
		*k = kindJSON
	default:
		return fmt.Errorf("want status or json, got %q", s)
	}
	return nil
}

// of returns the kind of the document at path: k, if --kind gave one, else
// status for a file named status.json and json for any other.
func (k kind) of(path string) kind {
	if k != kindByName {
		return k
	}
	if filepath.Base(path) == status.StatusFile {
		return kindStatus
	}
	return kindJSON
}

// isStatus reports whether k (as returned by of) is a status document.
func (k kind) isStatus() bool { return k == kindStatus }

// A doc is a document of either kind, as the commands read and change it.
type doc interface {
	Get(name string) (json.RawMessage, bool)
	Decode(name string, v any) error
	Set(name string, value json.RawMessage) error
	Delete(name string)
	MarshalJSON() ([]byte, error)
}

// probe returns an empty document of kind k, for checks that need no file:
// what Set accepts, what an absent member reads as.
func (k kind) probe() doc {
	if k.isStatus() {
		return new(status.StatusDocument)
	}
	return new(status.Document)
}

// A store is the Store of one document, typed by its kind.
type store struct {
	status.AnyStore // for status.MutateAll
	kind            kind
	mutate          func(ctx context.Context, fn func(doc) error) (doc, error)
	load            func(ctx context.Context) (doc, error) // LoadExisting: a missing file is os.ErrNotExist
	in              func(t *status.Tx) (doc, error)
	quarantine      func(ctx context.Context) (string, error)
}

// newStore returns the store of the document at path, of kind k.of(path).
func newStore(k kind, path string, opts ...status.Option) store {
	if k = k.of(path); k.isStatus() {
		return storeOf[status.StatusDocument](k, path, opts)
	}
	return storeOf[status.Document](k, path, opts)
}

func storeOf[D any, P interface {
	*D
	doc
}](k kind, path string, opts []status.Option) store {
	s := status.NewStore[D](path, opts...)
	return store{
		AnyStore: s,
		kind:     k,
		mutate: func(ctx context.Context, fn func(doc) error) (doc, error) {
			d, err := s.Mutate(ctx, func(d *D) error { return fn(P(d)) })
			return P(&d), err
		},
		load: func(ctx context.Context) (doc, error) {
			d, err := s.LoadExisting(ctx)
			return P(&d), err
		},
		in: func(t *status.Tx) (doc, error) {
			d, err := s.In(t)
			return P(d), err
		},
		quarantine: s.Quarantine,
	}
}

// A permFlag is --perm: the permission bits of a document that a command
// creates (status.WithPerm), in octal.
type permFlag struct {
	mode os.FileMode
	set  bool
}

func (p *permFlag) String() string {
	if p == nil || !p.set {
		return ""
	}
	return fmt.Sprintf("%#o", p.mode)
}

func (p *permFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return fmt.Errorf("want permission bits in octal, such as 0664, got %q", s)
	}
	p.mode, p.set = os.FileMode(n), true
	return nil
}

// options returns the store options of --max-size and --perm.
func storeOptions(maxSize int64, perm permFlag) []status.Option {
	opts := []status.Option{status.WithMaxSize(maxSize)}
	if perm.set {
		opts = append(opts, status.WithPerm(perm.mode))
	}
	return opts
}
