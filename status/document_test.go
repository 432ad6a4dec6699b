package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

func docFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	if content != "" {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func readDocFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func setStatusMember(name, value string) func(*status.StatusDocument) error {
	return func(d *status.StatusDocument) error { return d.Set(name, json.RawMessage(value)) }
}

// A change lays the document out as Store[Status] does, keeping every
// other value byte for byte: numbers beyond float64, nested layout, and
// members Status does not declare.
func TestStatusDocumentKeepsValuesAndLaysOut(t *testing.T) {
	path := docFile(t, `{"zeta": {"b":1,  "a":[1, 2]}, "big": 9007199254740993, "runs": 1, "status": "queued", "updated_at": "2001-02-03T04:05:06Z"}`)
	ctx := context.Background()
	if _, err := status.NewStore[status.StatusDocument](path).Mutate(ctx, setStatusMember("agent", `"x"`)); err != nil {
		t.Fatal(err)
	}
	got := readDocFile(t, path)
	const head = "{\n  \"status\": \"queued\",\n  \"agent\": \"x\",\n  \"updated_at\": \""
	const tail = "\",\n  \"runs\": 1,\n  \"big\": 9007199254740993,\n  \"zeta\": {\"b\":1,  \"a\":[1, 2]}\n}\n"
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Errorf("layout:\n%s\nwant %s<now>%s", got, head, tail)
	}
}

// The same change through Store[Status] and Store[StatusDocument] writes the
// same bytes: one layout, whichever type a program uses.
func TestStatusDocumentLayoutMatchesStatus(t *testing.T) {
	const start = `{"status":"running","agent":"a","repo":"r","task":"t","started_at":"2020-01-01T00:00:00Z","updated_at":"2020-01-01T00:00:00Z","runs":2,"extra":[1,2],"a_note":"x"}`
	viaStatus, viaDoc := docFile(t, start), docFile(t, start)
	ctx := context.Background()
	if _, err := status.Mutate(ctx, viaStatus, func(s *status.Status) error { s.Runs = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := status.NewStore[status.StatusDocument](viaDoc).Mutate(ctx, setStatusMember("runs", "3")); err != nil {
		t.Fatal(err)
	}
	var a, b status.StatusDocument
	for p, d := range map[string]*status.StatusDocument{viaStatus: &a, viaDoc: &b} {
		if err := json.Unmarshal([]byte(readDocFile(t, p)), d); err != nil {
			t.Fatal(err)
		}
		d.Delete("updated_at") // stamped with two different times
	}
	x, _ := a.MarshalJSON()
	y, _ := b.MarshalJSON()
	if !bytes.Equal(x, y) {
		t.Errorf("Store[Status] wrote\n%s\nStore[StatusDocument] wrote\n%s", x, y)
	}
}

// Setting values a document already holds (in another spelling of the same
// JSON text) writes nothing; CONTROL: a real change writes.
func TestStatusDocumentNoChangeNoWrite(t *testing.T) {
	const content = `{"runs":  3, "tags": [ "a" ], "status": "queued"}`
	path := docFile(t, content)
	store := status.NewStore[status.StatusDocument](path)
	ctx := context.Background()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Mutate(ctx, func(d *status.StatusDocument) error {
		return errors.Join(d.Set("runs", json.RawMessage("3")), d.Set("tags", json.RawMessage(`["a"]`)))
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := readDocFile(t, path); got != content || !os.SameFile(before, after) {
		t.Errorf("an unchanged document was rewritten:\n%s", got)
	}
	if _, err := store.Mutate(ctx, setStatusMember("runs", "4")); err != nil {
		t.Fatal(err)
	}
	if readDocFile(t, path) == content {
		t.Error("CONTROL: a change was not written")
	}
	// A missing document that fn leaves empty is not created.
	missing := filepath.Join(t.TempDir(), "status.json")
	if _, err := status.NewStore[status.StatusDocument](missing).Mutate(ctx, func(d *status.StatusDocument) error { d.Delete("x"); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty change created the file (stat: %v)", err)
	}
}

func TestStatusDocumentStamp(t *testing.T) {
	path := docFile(t, `{"runs": 1, "updated_at": "2001-02-03T04:05:06Z"}`)
	store := status.NewStore[status.StatusDocument](path)
	ctx := context.Background()
	start := time.Now()
	doc, err := store.Mutate(ctx, setStatusMember("runs", "2"))
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	if err := doc.Decode("updated_at", &at); err != nil {
		t.Fatal(err)
	}
	if at.Location() != time.UTC || at.Before(start.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("updated_at = %v, want the time of the write in UTC", at)
	}
	// An explicit updated_at wins, and so does deleting it.
	doc, err = store.Mutate(ctx, func(d *status.StatusDocument) error {
		return errors.Join(d.Set("runs", json.RawMessage("3")), d.Set("updated_at", json.RawMessage(`"2030-01-01T00:00:00Z"`)))
	})
	if v, _ := doc.Get("updated_at"); err != nil || string(v) != `"2030-01-01T00:00:00Z"` {
		t.Errorf("explicit updated_at: %s, %v", v, err)
	}
	doc, err = store.Mutate(ctx, func(d *status.StatusDocument) error {
		d.Delete("updated_at")
		return d.Set("runs", json.RawMessage("4"))
	})
	if _, present := doc.Get("updated_at"); err != nil || present {
		t.Errorf("deleted updated_at came back (err %v)", err)
	}
}

// Every document that Store[Status] refuses, Store[StatusDocument] refuses, and
// the file is left as it is. CONTROL: each fixed spelling decodes.
func TestStatusDocumentRefusesWhatStatusRefuses(t *testing.T) {
	for _, tc := range []struct{ name, bad, fixed string }{
		{"null", "null", "{}"},
		{"array", "[1]", "{}"},
		{"empty", " ", "{}"},
		{"duplicate", `{"x": 1, "x": 2}`, `{"x": 1, "y": 2}`},
		{"case variant", `{"Runs": 1}`, `{"runs": 1}`},
		{"name not UTF-8", "{\"\xff\": 1}", `{"a": 1}`},
		{"lone surrogate in a field", `{"note": "\ud800"}`, `{"note": "\u00e9"}`},
		{"wrong type", `{"runs": "3"}`, `{"runs": 3}`},
		{"fraction", `{"runs": 1.5}`, `{"runs": 1}`},
		{"bad time", `{"started_at": "yesterday"}`, `{"started_at": "2020-01-01T00:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, content := range []string{tc.bad, tc.fixed} {
				path := docFile(t, content)
				_, errStatus := status.Load(context.Background(), path)
				_, errDoc := status.NewStore[status.StatusDocument](path).Mutate(context.Background(), setStatusMember("note", `"n"`))
				if got, want := errDoc != nil, content == tc.bad; got != want || (errStatus != nil) != want {
					t.Fatalf("%q: Store[StatusDocument]: %v, Store[Status]: %v; want both refused: %v", content, errDoc, errStatus, want)
				}
				if errDoc != nil && !errors.Is(errDoc, status.ErrCorrupt) {
					t.Errorf("%q: %v, want ErrCorrupt", content, errDoc)
				}
				if errDoc != nil && readDocFile(t, path) != content {
					t.Errorf("refused document %q was changed", content)
				}
			}
		})
	}
}

func TestStatusDocumentSetRefuses(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"runs", `"3"`}, {"runs", "1.5"}, {"status", "1"}, {"started_at", `"yesterday"`},
		{"Runs", "1"}, {"\xff", "1"}, {"x", "\"\xff\""}, {"x", `"\udc00"`}, {"x", "{"}, {"x", "1 2"},
	} {
		var d status.StatusDocument
		if err := d.Set("keep", json.RawMessage("1")); err != nil {
			t.Fatal(err)
		}
		if err := d.Set(tc.name, json.RawMessage(tc.value)); err == nil {
			t.Errorf("Set(%q, %q) accepted", tc.name, tc.value)
		}
		if b, _ := d.MarshalJSON(); string(b) != "{\n  \"keep\": 1\n}" {
			t.Errorf("a refused Set changed the document: %s", b)
		}
	}
	// CONTROL: the same names take values of the right type.
	var d status.StatusDocument
	for name, value := range map[string]string{"runs": "3", "status": `"queued"`, "x": `"\u00e9"`, "started_at": `"2020-01-01T00:00:00Z"`} {
		if err := d.Set(name, json.RawMessage(value)); err != nil {
			t.Errorf("Set(%q, %s): %v", name, value, err)
		}
	}
}

func TestStatusDocumentGet(t *testing.T) {
	var d status.StatusDocument
	if err := json.Unmarshal([]byte(`{"x": 1, "runs": 2}`), &d); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		present    bool
	}{
		{"x", "1", true}, {"runs", "2", true}, {"pid", "0", false}, {"note", `""`, false}, {"y", "", false},
	} {
		v, present := d.Get(tc.name)
		if string(v) != tc.want || present != tc.present {
			t.Errorf("Get(%q) = %s, %v; want %s, %v", tc.name, v, present, tc.want, tc.present)
		}
	}
	c := d.Clone()
	c.Delete("x")
	if _, ok := d.Get("x"); !ok || c.Len() != 1 || d.Len() != 2 {
		t.Error("Clone shares members with the original")
	}
}

// LoadExisting tells a missing document from an empty one; Load does not.
func TestLoadExisting(t *testing.T) {
	ctx := context.Background()
	missing := status.NewStore[status.StatusDocument](filepath.Join(t.TempDir(), "status.json"))
	if _, err := missing.LoadExisting(ctx); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing.Name()) {
		t.Errorf("missing: %v, want os.ErrNotExist naming the file", err)
	}
	if d, err := missing.Load(ctx); err != nil || d.Len() != 0 {
		t.Errorf("LoadContext of a missing document: %v, %v; want empty, nil", d, err)
	}
	empty := status.NewStore[status.StatusDocument](docFile(t, "{}"))
	if d, err := empty.LoadExisting(ctx); err != nil || d.Len() != 0 {
		t.Errorf("empty object: %v, %v", d, err)
	}
	if _, err := status.NewStore[status.Status](filepath.Join(t.TempDir(), "x.json")).LoadExisting(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Store[Status]: %v, want os.ErrNotExist", err)
	}
}

// The file backend's limits hold for Documents: the size cap and links.
func TestStatusDocumentHostileFiles(t *testing.T) {
	ctx := context.Background()
	big := docFile(t, `{"x": "`+strings.Repeat("a", 100)+`"}`)
	if _, err := status.NewStore[status.StatusDocument](big, status.WithMaxSize(50)).LoadExisting(ctx); !errors.Is(err, fs.ErrTooLarge) {
		t.Errorf("over the cap: %v, want fs.ErrTooLarge", err)
	}
	link := filepath.Join(t.TempDir(), "status.json")
	if err := os.Symlink(big, link); err != nil {
		t.Fatal(err)
	}
	if _, err := status.NewStore[status.StatusDocument](link).Mutate(ctx, setStatusMember("x", "1")); !errors.Is(err, fs.ErrNotRegular) {
		t.Errorf("link: %v, want fs.ErrNotRegular", err)
	}
}

// A Document is any JSON object: members that share a name with a Status
// field hold whatever their program put there, the layout sorts every
// member by name, and nothing is stamped. (A registry with "runs": "n/a"
// was refused as corrupt when Document applied Status's types.)
func TestDocumentAnyObject(t *testing.T) {
	const content = `{"task": 7, "pid": "host:1", "active_count": 2, "runs": "n/a", "status": {"ok": true}, "started_at": "yesterday", "Runs": 1}`
	path := filepath.Join(t.TempDir(), "registry.json")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	store := status.NewStore[status.Document](path)
	ctx := context.Background()
	doc, err := store.LoadExisting(ctx)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if v, ok := doc.Get("runs"); !ok || string(v) != `"n/a"` {
		t.Errorf(`Get("runs") = %s, %v; want "n/a", true`, v, ok)
	}
	if v, ok := doc.Get("agent"); ok || v != nil {
		t.Errorf(`Get("agent") of an absent member = %s, %v; want nil, false`, v, ok)
	}
	if _, err := store.Mutate(ctx, func(d *status.Document) error {
		return errors.Join(d.Set("active_count", json.RawMessage("3")), d.Set("pid", json.RawMessage(`"host:2"`)))
	}); err != nil {
		t.Fatalf("Mutate: %v", err)
	}
	const want = "{\n  \"Runs\": 1,\n  \"active_count\": 3,\n  \"pid\": \"host:2\",\n  \"runs\": \"n/a\",\n  \"started_at\": \"yesterday\",\n  \"status\": {\"ok\": true},\n  \"task\": 7\n}\n"
	if got := readDocFile(t, path); got != want {
		t.Errorf("after the change:\n%s\nwant (sorted, verbatim, no updated_at):\n%s", got, want)
	}
	// CONTROL: the same file is corrupt as a status document.
	if _, err := status.NewStore[status.StatusDocument](path).LoadExisting(ctx); !errors.Is(err, status.ErrCorrupt) {
		t.Errorf("Store[StatusDocument]: %v, want ErrCorrupt", err)
	}
}

// What a Document still refuses: what no reader can take the same way,
// whatever the members mean. CONTROL: each fixed spelling decodes.
func TestDocumentRefuses(t *testing.T) {
	for _, tc := range []struct{ name, bad, fixed string }{
		{"null", "null", "{}"},
		{"array", "[1]", "{}"},
		{"string", `"x"`, "{}"},
		{"empty", " ", "{}"},
		{"duplicate", `{"x": 1, "x": 2}`, `{"x": 1, "y": 2}`},
		{"name not UTF-8", "{\"\xff\": 1}", `{"a": 1}`},
		{"lone surrogate in a name", `{"\ud800": 1}`, `{"\u00e9": 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, content := range []string{tc.bad, tc.fixed} {
				path := filepath.Join(t.TempDir(), "doc.json")
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := status.NewStore[status.Document](path).Mutate(context.Background(), func(d *status.Document) error {
					return d.Set("note", json.RawMessage(`"n"`))
				})
				if (err != nil) != (content == tc.bad) {
					t.Fatalf("%q: %v; want refused: %v", content, err, content == tc.bad)
				}
				if err != nil && (!errors.Is(err, status.ErrCorrupt) || readDocFile(t, path) != content) {
					t.Errorf("%q: %v, want ErrCorrupt and the file untouched", content, err)
				}
			}
		})
	}
}

// Document.Set takes any JSON value for any name, and refuses only what
// is not one JSON value or not UTF-8. CONTROL: StatusDocument refuses the
// values that do not fit Status.
func TestDocumentSet(t *testing.T) {
	var d status.Document
	var sd status.StatusDocument
	for name, value := range map[string]string{"runs": `"n/a"`, "status": "1", "started_at": `"yesterday"`, "Runs": "1"} {
		if err := d.Set(name, json.RawMessage(value)); err != nil {
			t.Errorf("Document.Set(%q, %s): %v", name, value, err)
		}
		if err := sd.Set(name, json.RawMessage(value)); err == nil {
			t.Errorf("CONTROL: StatusDocument.Set(%q, %s) accepted", name, value)
		}
	}
	for _, tc := range []struct{ name, value string }{{"\xff", "1"}, {"x", "\"\xff\""}, {"x", `"\udc00"`}, {"x", "{"}, {"x", "1 2"}} {
		if err := d.Set(tc.name, json.RawMessage(tc.value)); err == nil {
			t.Errorf("Document.Set(%q, %q) accepted", tc.name, tc.value)
		}
	}
	if d.Len() != 4 {
		t.Errorf("Len = %d, want 4", d.Len())
	}
}
