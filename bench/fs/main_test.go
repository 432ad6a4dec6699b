package fs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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

// readFile returns the content of path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeFile writes data to path, mode 0644 (less the umask).
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// umask is the process umask, read from the mode of a file created with
// 0777 (syscall.Umask would change it).
func umask(t *testing.T) os.FileMode {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o777)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}
