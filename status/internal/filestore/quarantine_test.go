package filestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two quarantines in one second never share a name: the second gets -2.
func TestQuarantineNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "status.json")
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	var names []string
	for i := range 3 {
		os.WriteFile(key, []byte{byte('a' + i)}, 0o644)
		name, err := moveAside(key, now)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(name))
		if data, _ := os.ReadFile(name); string(data) != string(rune('a'+i)) {
			t.Errorf("%s holds %q", name, data)
		}
	}
	want := "status.json.corrupt-20260102T150405Z status.json.corrupt-20260102T150405Z-2 status.json.corrupt-20260102T150405Z-3"
	if strings.Join(names, " ") != want {
		t.Errorf("names %q, want %q", names, want)
	}
}
