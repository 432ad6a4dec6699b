//go:build darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd

package status

import (
	"errors"
	"os"
	"syscall"
)

type lockHandle struct {
	fd   int
	name string
}

func openLock(name string) (*lockHandle, error) {
	fd, err := open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC)
	if errors.Is(err, syscall.EACCES) {
		// A lock file we may read but not write still takes a flock.
		fd, err = open(name, syscall.O_RDONLY|syscall.O_CLOEXEC)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &lockHandle{fd: fd, name: name}, nil
}

func open(name string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(name, flags, 0o644)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func (h *lockHandle) tryLock() (bool, error) {
	for {
		err := syscall.Flock(h.fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch err {
		case nil:
			return true, nil
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return false, nil
		}
		return false, &os.PathError{Op: "flock", Path: h.name, Err: err}
	}
}

// close releases the lock: the kernel drops a flock when the last
// descriptor of its open file description closes.
func (h *lockHandle) close() { syscall.Close(h.fd) }
