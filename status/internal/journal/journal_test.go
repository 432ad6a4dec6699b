package journal

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testJournal = "/w/.txn-0123456789abcdef.journal"

var testBefore = Before([]byte(`{"runs":1}`))

// Every prefix of a marker that a commit writes, cut before its first
// newline, is torn (undone); a prefix cut after it is not a marker that
// recovery acts on as complete.
func TestParseMarkerPrefixes(t *testing.T) {
	full := string(formatMarker(testJournal, testBefore))
	for i := 0; i <= len(full); i++ {
		m, torn, ok := parseMarker([]byte(full[:i]))
		nl := strings.IndexByte(full, '\n')
		switch {
		case i <= nl:
			if !torn || ok {
				t.Fatalf("prefix %q: torn %v ok %v, want torn", full[:i], torn, ok)
			}
		case i < len(full):
			if torn || ok {
				t.Fatalf("prefix %q: torn %v ok %v, want malformed", full[:i], torn, ok)
			}
		default:
			if torn || !ok || m.journal != testJournal || m.before != testBefore {
				t.Fatalf("whole marker: %+v torn %v ok %v", m, torn, ok)
			}
		}
	}
}

func TestParseMarkerRefuses(t *testing.T) {
	for _, data := range []string{
		"journal-1", "/etc/passwd\n", testJournal + "\nxyz\n", testJournal + "\n" + testBefore, // no final newline
		testJournal + "\nnone\nmore\n", "/w/../w/.txn-0123456789abcdef.journal\nnone\n",
		"/w/.txn-0123456789ABCDEF.journal\nnone\n", "relative/.txn-0123456789abcdef.journal\nnone\n",
		"\x00", "/a\x00b",
	} {
		if _, torn, ok := parseMarker([]byte(data)); ok || torn && strings.Contains(data, "\n") {
			t.Errorf("%q: ok %v torn %v, want refused", data, ok, torn)
		}
	}
}

func TestParseJournal(t *testing.T) {
	good := `{"documents": ["/w/a.json", "/w/b/status.json"]}` + "\n"
	if docs, err := parseJournal([]byte(good)); err != nil || len(docs) != 2 {
		t.Fatalf("%v, %v", docs, err)
	}
	for _, data := range []string{
		`{"documents": ["/w/a.json"]`, `{"documents": []}`, `{"documents": null}`, `[]`,
		`{"documents": ["/w/a.json"], "extra": 1}`, `{"documents": ["/w/a.json"]} {}`,
		`{"documents": ["w/a.json"]}`, `{"documents": ["/w/x/../a.json"]}`, `{"documents": ["/w/a.json", "/w/a.json"]}`,
		`{"documents": ["/w/a\njson"]}`, "{\"documents\": [\"/w/\xff.json\"]}",
	} {
		if _, err := parseJournal([]byte(data)); err == nil {
			t.Errorf("%q: accepted", data)
		}
	}
}

func FuzzParseMarker(f *testing.F) {
	f.Add(formatMarker(testJournal, testBefore))
	f.Add([]byte(testJournal + "\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, torn, ok := parseMarker(data)
		if torn && ok {
			t.Fatal("torn and complete")
		}
		if ok && (!validPath(m.journal) || !IsJournalName(m.journal[strings.LastIndexByte(m.journal, '/')+1:])) {
			t.Fatalf("accepted journal %q", m.journal)
		}
		if ok && m.before != "" && string(formatMarker(m.journal, m.before)) != string(data) {
			t.Fatalf("%q does not round-trip", data)
		}
	})
}

func FuzzParseJournal(f *testing.F) {
	f.Add([]byte(`{"documents": ["/w/a.json", "/w/b.json"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := parseJournal(data)
		if err != nil {
			return
		}
		if len(docs) == 0 || len(docs) > MaxDocuments {
			t.Fatalf("%d documents", len(docs))
		}
		for _, d := range docs {
			if !validPath(d) {
				t.Fatalf("accepted %q", d)
			}
		}
	})
}
