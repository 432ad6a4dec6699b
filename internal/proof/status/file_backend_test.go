package status_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstate/core/status/storetest"
)

func fileHarness() storetest.Harness {
	return storetest.Harness{
		Path: func(t *testing.T) string { return filepath.Join(t.TempDir(), "status.json") },
		WriteRaw: func(t *testing.T, path string, data []byte) {
			t.Helper()
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		ReadRaw: func(t *testing.T, path string) ([]byte, bool) {
			t.Helper()
			b, err := os.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				return nil, false
			}
			if err != nil {
				t.Fatal(err)
			}
			return b, true
		},
	}
}

func TestFileBackendContract(t *testing.T) {
	storetest.Run(t, fileHarness())
}
