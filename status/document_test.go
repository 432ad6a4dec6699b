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

func setMember(name, value string) func(*status.Document) error {
	return func(d *status.Document) error { return d.Set(name, json.RawMessage(value)) }
}

// A change lays the document out as Store[Status] does, keeping every
// other value byte for byte: numbers beyond float64, nested layout, and
// members Status does not declare.
func TestDocumentKeepsValuesAndLaysOut(t *testing.T) {
	path := docFile(t, `{"zeta": {"b":1,  "a":[1, 2]}, "big": 9007199254740993, "runs": 1, "status": "queued", "updated_at": "2001-02-03T04:05:06Z"}`)
	ctx := context.Background()
	if _, err := status.NewStore[status.Document](path).Mutate(ctx, setMember("agent", `"x"`)); err != nil {
		t.Fatal(err)
	}
	got := readDocFile(t, path)
	const head = "{\n  \"status\": \"queued\",\n  \"agent\": \"x\",\n  \"updated_at\": \""
	const tail = "\",\n  \"runs\": 1,\n  \"big\": 9007199254740993,\n  \"zeta\": {\"b\":1,  \"a\":[1, 2]}\n}\n"
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Errorf("layout:\n%s\nwant %s<now>%s", got, head, tail)
	}
}

// The same change through Store[Status] and Store[Document] writes the
// same bytes: one layout, whichever type a program uses.
func TestDocumentLayoutMatchesStatus(t *testing.T) {
	const start = `{"status":"running","agent":"a","repo":"r","task":"t","started_at":"2020-01-01T00:00:00Z","updated_at":"2020-01-01T00:00:00Z","runs":2,"extra":[1,2],"a_note":"x"}`
	viaStatus, viaDoc := docFile(t, start), docFile(t, start)
	ctx := context.Background()
	if _, err := status.Mutate(ctx, viaStatus, func(s *status.Status) error { s.Runs = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := status.NewStore[status.Document](viaDoc).Mutate(ctx, setMember("runs", "3")); err != nil {
		t.Fatal(err)
	}
	var a, b status.Document
	for p, d := range map[string]*status.Document{viaStatus: &a, viaDoc: &b} {
		if err := json.Unmarshal([]byte(readDocFile(t, p)), d); err != nil {
			t.Fatal(err)
		}
		d.Delete("updated_at") // stamped with two different times
	}
	x, _ := a.MarshalJSON()
	y, _ := b.MarshalJSON()
	if !bytes.Equal(x, y) {
		t.Errorf("Store[Status] wrote\n%s\nStore[Document] wrote\n%s", x, y)
	}
}

// Setting values a document already holds (in another spelling of the same
// JSON text) writes nothing; CONTROL: a real change writes.
func TestDocumentNoChangeNoWrite(t *testing.T) {
	const content = `{"runs":  3, "tags": [ "a" ], "status": "queued"}`
	path := docFile(t, content)
	store := status.NewStore[status.Document](path)
	ctx := context.Background()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Mutate(ctx, func(d *status.Document) error {
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
	if _, err := store.Mutate(ctx, setMember("runs", "4")); err != nil {
		t.Fatal(err)
	}
	if readDocFile(t, path) == content {
		t.Error("CONTROL: a change was not written")
	}
	// A missing document that fn leaves empty is not created.
	missing := filepath.Join(t.TempDir(), "status.json")
	if _, err := status.NewStore[status.Document](missing).Mutate(ctx, func(d *status.Document) error { d.Delete("x"); return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an empty change created the file (stat: %v)", err)
	}
}

func TestDocumentStamp(t *testing.T) {
	path := docFile(t, `{"runs": 1, "updated_at": "2001-02-03T04:05:06Z"}`)
	store := status.NewStore[status.Document](path)
	ctx := context.Background()
	start := time.Now()
	doc, err := store.Mutate(ctx, setMember("runs", "2"))
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
	doc, err = store.Mutate(ctx, func(d *status.Document) error {
		return errors.Join(d.Set("runs", json.RawMessage("3")), d.Set("updated_at", json.RawMessage(`"2030-01-01T00:00:00Z"`)))
	})
	if v, _ := doc.Get("updated_at"); err != nil || string(v) != `"2030-01-01T00:00:00Z"` {
		t.Errorf("explicit updated_at: %s, %v", v, err)
	}
	doc, err = store.Mutate(ctx, func(d *status.Document) error {
		d.Delete("updated_at")
		return d.Set("runs", json.RawMessage("4"))
	})
	if _, present := doc.Get("updated_at"); err != nil || present {
		t.Errorf("deleted updated_at came back (err %v)", err)
	}
}

// Every document that Store[Status] refuses, Store[Document] refuses, and
// the file is left as it is. CONTROL: each fixed spelling decodes.
func TestDocumentRefusesWhatStatusRefuses(t *testing.T) {
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
				_, errDoc := status.NewStore[status.Document](path).Mutate(context.Background(), setMember("note", `"n"`))
				if got, want := errDoc != nil, content == tc.bad; got != want || (errStatus != nil) != want {
					t.Fatalf("%q: Store[Document]: %v, Store[Status]: %v; want both refused: %v", content, errDoc, errStatus, want)
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

func TestDocumentSetRefuses(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"runs", `"3"`}, {"runs", "1.5"}, {"status", "1"}, {"started_at", `"yesterday"`},
		{"Runs", "1"}, {"\xff", "1"}, {"x", "\"\xff\""}, {"x", `"\udc00"`}, {"x", "{"}, {"x", "1 2"},
	} {
		var d status.Document
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
	var d status.Document
	for name, value := range map[string]string{"runs": "3", "status": `"queued"`, "x": `"\u00e9"`, "started_at": `"2020-01-01T00:00:00Z"`} {
		if err := d.Set(name, json.RawMessage(value)); err != nil {
			t.Errorf("Set(%q, %s): %v", name, value, err)
		}
	}
}

func TestDocumentGet(t *testing.T) {
	var d status.Document
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
	missing := status.NewStore[status.Document](filepath.Join(t.TempDir(), "status.json"))
	if _, err := missing.LoadExisting(ctx); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing.Name()) {
		t.Errorf("missing: %v, want os.ErrNotExist naming the file", err)
	}
	if d, err := missing.Load(ctx); err != nil || d.Len() != 0 {
		t.Errorf("LoadContext of a missing document: %v, %v; want empty, nil", d, err)
	}
	empty := status.NewStore[status.Document](docFile(t, "{}"))
	if d, err := empty.LoadExisting(ctx); err != nil || d.Len() != 0 {
		t.Errorf("empty object: %v, %v", d, err)
	}
	if _, err := status.NewStore[status.Status](filepath.Join(t.TempDir(), "x.json")).LoadExisting(ctx); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Store[Status]: %v, want os.ErrNotExist", err)
	}
}

// The file backend's limits hold for Documents: the size cap and links.
func TestDocumentHostileFiles(t *testing.T) {
	ctx := context.Background()
	big := docFile(t, `{"x": "`+strings.Repeat("a", 100)+`"}`)
	if _, err := status.NewStore[status.Document](big, status.WithMaxSize(50)).LoadExisting(ctx); !errors.Is(err, fs.ErrTooLarge) {
		t.Errorf("over the cap: %v, want fs.ErrTooLarge", err)
	}
	link := filepath.Join(t.TempDir(), "status.json")
	if err := os.Symlink(big, link); err != nil {
		t.Fatal(err)
	}
	if _, err := status.NewStore[status.Document](link).Mutate(ctx, setMember("x", "1")); !errors.Is(err, fs.ErrNotRegular) {
		t.Errorf("link: %v, want fs.ErrNotRegular", err)
	}
}
