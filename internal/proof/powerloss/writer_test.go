//go:build linux

package powerloss_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// The writer child's environment.
const (
	envRole    = "POWERLOSS_ROLE"    // "writer" in the child
	envVariant = "POWERLOSS_VARIANT" // a key of variants
	envDir     = "POWERLOSS_DIR"     // where the replaced document lives
	envNewDir  = "POWERLOSS_NEW_DIR" // where this round's new documents go
	envStart   = "POWERLOSS_START"   // the first version to write
)

// A variant is one way to write a document: replace (the same name, again
// and again) or create (a new name).
type variant struct {
	control bool   // an unsafe pattern that the harness must catch losing data
	name    string // of the replaced document
	write   func(path string, v int) error
	check   func(data []byte) (version int, err error)
}

var variants = map[string]variant{
	// fs.WriteAtomic: temp file, fsync, rename, directory fsync.
	"atomic": {name: "doc", write: func(p string, v int) error { return fs.WriteAtomic(p, document(v), 0o644) }, check: checkDocument},
	// status.Mutate: the same replace under the document's lock.
	"mutate": {name: "status.json", write: mutate, check: checkStatus},
	// CONTROL: os.WriteFile truncates and writes in place, no fsync.
	"control-inplace": {control: true, name: "doc", write: func(p string, v int) error {
		return os.WriteFile(p, document(v), 0o644)
	}, check: checkDocument},
	// CONTROL: a temp file renamed over the document, never fsynced.
	"control-rename-nofsync": {control: true, name: "doc", write: func(p string, v int) error {
		if err := os.WriteFile(p+".tmp", document(v), 0o644); err != nil {
			return err
		}
		return os.Rename(p+".tmp", p)
	}, check: checkDocument},
}

// body returns the deterministic payload of version v: 500 bytes to about
// 18 KiB, so that documents span several pages.
func body(v int) []byte {
	n := 500 + (v%7)*3000
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte((i*7+v)%26)
	}
	return b
}

// document is version v in a self-validating form: a header with the
// version, the body's length and its CRC-32, then the body.
func document(v int) []byte {
	b := body(v)
	return append(fmt.Appendf(nil, "powerloss v=%d n=%d crc=%08x\n", v, len(b), crc32.ChecksumIEEE(b)), b...)
}

// checkDocument returns the version of a whole document, or why it is not
// one (empty, torn, stale bytes).
func checkDocument(data []byte) (int, error) {
	head, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return 0, fmt.Errorf("no header in %d bytes", len(data))
	}
	var v, n int
	var crc uint32
	if _, err := fmt.Sscanf(string(head), "powerloss v=%d n=%d crc=%08x", &v, &n, &crc); err != nil {
		return 0, fmt.Errorf("bad header %.60q: %v", head, err)
	}
	if len(rest) != n || crc32.ChecksumIEEE(rest) != crc || !bytes.Equal(rest, body(v)) {
		return 0, fmt.Errorf("version %d: body of %d bytes does not match its header (n=%d)", v, len(rest), n)
	}
	return v, nil
}

func mutate(path string, v int) error {
	_, err := status.Mutate(context.Background(), path, func(s *status.Status) error {
		s.Runs, s.Note = v, string(body(v))
		return nil
	})
	return err
}

// checkStatus returns the version of a whole status document.
func checkStatus(data []byte) (int, error) {
	var s status.Status
	if err := json.Unmarshal(data, &s); err != nil {
		return 0, fmt.Errorf("%d bytes: %v", len(data), err)
	}
	if s.Note != string(body(s.Runs)) {
		return 0, fmt.Errorf("version %d: note of %d bytes does not match", s.Runs, len(s.Note))
	}
	return s.Runs, nil
}

// newName is the name of the document created with version v.
func newName(v int) string { return "new-" + strconv.Itoa(v) }

// ignored reports whether a name in a document directory is not a
// document: lock files and temp files, which a crash may leave behind.
func ignored(name string) bool {
	return strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".tmp")
}

// writerMain is the child: it writes versions start, start+1, ... forever,
// each as a replace of the document and then the creation of a new one,
// and prints "R v" or "C v" as soon as that call has returned nil. The
// test SIGKILLs it.
func writerMain() {
	if tv, ok := txVariants[os.Getenv(envVariant)]; ok {
		txWriterMain(tv.commit)
	}
	vr, ok := variants[os.Getenv(envVariant)]
	start, err := strconv.Atoi(os.Getenv(envStart))
	if !ok || err != nil {
		fmt.Fprintln(os.Stderr, "writer: bad environment")
		os.Exit(2)
	}
	replaced := filepath.Join(os.Getenv(envDir), vr.name)
	newDir := os.Getenv(envNewDir)
	for v := start; ; v++ {
		for _, op := range []struct {
			tag  string
			path string
		}{{"R", replaced}, {"C", filepath.Join(newDir, newName(v))}} {
			if err := vr.write(op.path, v); err != nil {
				fmt.Fprintf(os.Stderr, "writer: %s %d: %v\n", op.tag, v, err)
				os.Exit(1)
			}
			if _, err := fmt.Printf("%s %d\n", op.tag, v); err != nil {
				os.Exit(0) // the test has gone
			}
		}
	}
}
