//go:build unix

package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentstate/core/config"
)

// A FIFO with no writer would block a plain os.ReadFile forever. LoadFile
// refuses it at once; if it blocked, this test would hang until the test
// timeout, never pass.
func TestLoadFileRefusesFIFOWithoutBlocking(t *testing.T) {
	for _, name := range []string{"agents.yaml", "config.json"} {
		path := filepath.Join(t.TempDir(), name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		c := config.New()
		err := c.LoadFile(path)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), path) {
			t.Fatalf("LoadFile(FIFO) = %v, want a refusal naming the path", err)
		}
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if err := config.New().LoadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("LoadFile(/dev/zero) = %v", err)
		}
	}
}
