package fs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	natefinch "github.com/natefinch/atomic"
	"go.uber.org/goleak"

	"github.com/agentstate/core/fs"
)

func TestMain(m *testing.M) {
	// The strace tests re-execute this test binary as the traced writer.
	if w := os.Getenv(writerEnv); w != "" {
		writerMain(w)
	}
	goleak.VerifyTestMain(m)
}

// writerEnv names the writer a re-executed test binary runs (writerMain).
const writerEnv = "BENCH_FS_WRITER"

// writerMain writes $BENCH_FS_ROOT/sub/status.json once with writer and
// exits.
func writerMain(writer string) {
	target := filepath.Join(os.Getenv("BENCH_FS_ROOT"), "sub", "status.json")
	data := []byte(`{"status":"completed"}`)
	var err error
	switch writer {
	case "fs":
		err = fs.WriteAtomic(target, data, 0o644)
	case "natefinch":
		err = natefinch.WriteFile(target, bytes.NewReader(data))
	default:
		err = fmt.Errorf("unknown %s %q", writerEnv, writer)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
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
