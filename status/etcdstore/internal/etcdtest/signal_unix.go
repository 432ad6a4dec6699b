//go:build unix

package etcdtest

import (
	"os/exec"
	"syscall"
)

// Pause stops the member's process (SIGSTOP) without ending it: its
// connections stay open but nothing answers, as when its host is cut off.
func (m *Member) Pause() error { return m.signal(syscall.SIGSTOP) }

// Resume continues a paused member (SIGCONT).
func (m *Member) Resume() error { return m.signal(syscall.SIGCONT) }

func (m *Member) signal(sig syscall.Signal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		return errNotRunning
	}
	return m.cmd.Process.Signal(sig)
}

func resume(cmd *exec.Cmd) { cmd.Process.Signal(syscall.SIGCONT) }
