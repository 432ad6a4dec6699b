package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// listDir returns the sorted names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// assertNoTemp fails if dir holds a temp file of this package.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	for _, n := range listDir(t, dir) {
		if isTempName(n) {
			t.Errorf("temp file left behind: %s", filepath.Join(dir, n))
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustWrite(t *testing.T, path, data string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// umask reads the process umask without changing it (syscall.Umask would).
func umask(t *testing.T) os.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("cannot read umask without changing it: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		var m uint32
		if n, _ := fmt.Sscanf(line, "Umask:\t%o", &m); n == 1 {
			return os.FileMode(m)
		}
	}
	t.Skip("no Umask line in /proc/self/status")
	return 0
}

func sortStrings(s []string) { slices.Sort(s) }
