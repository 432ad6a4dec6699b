package watch

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"syscall"
	"time"
)

// An inotify is one inotify instance. Its descriptor is non-blocking and
// registered with the runtime's poller, so that a wait parks the goroutine
// (no thread is blocked) and read deadlines apply.
type inotify struct {
	fd  int
	f   *os.File
	rc  syscall.RawConn
	buf []byte
}

// rawEvent is one inotify event, translated.
type rawEvent struct {
	wd          int32
	name        string
	op          Op
	isDir       bool
	overflow    bool
	removeWatch bool // the directory moved: the kernel would go on watching it under its new name
}

// mask selects the events that can change what a reader of an entry sees.
// IN_MODIFY is left out on purpose: a file being written is looked at when
// it is closed (IN_CLOSE_WRITE) or renamed into place (IN_MOVED_TO).
const mask = syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
	syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_ATTRIB |
	syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF |
	syscall.IN_ONLYDIR | syscall.IN_EXCL_UNLINK

func newInotify() *inotify {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil // e.g. EMFILE: the user's instances are used up; poll
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &inotify{fd: fd, f: f, rc: rc, buf: make([]byte, 64<<10)}
}

func (in *inotify) close() error { return in.f.Close() }

func (in *inotify) add(dir string) (int32, error) {
	for {
		wd, err := syscall.InotifyAddWatch(in.fd, dir, mask)
		if err != syscall.EINTR {
			return int32(wd), err
		}
	}
}

func (in *inotify) remove(wd int32) { syscall.InotifyRmWatch(in.fd, uint32(wd)) }

// errLimit reports an error that means "no more watches", after which a
// directory is polled instead.
func errLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.ENOMEM)
}

// read returns the events queued. With a deadline in the past it does not
// wait; otherwise it waits until there is at least one event, the deadline
// passes (zero: none) or ctx ends (then it returns ctx's error).
func (in *inotify) read(ctx context.Context, deadline time.Time) ([]rawEvent, error) {
	var evs []rawEvent
	var rerr error
	// Read until the queue is empty; report whether anything was read.
	drain := func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), in.buf)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				return len(evs) > 0
			case err != nil:
				rerr = err
				return true
			case n <= 0:
				rerr = errors.New("inotify: short read")
				return true
			}
			evs = parse(evs, in.buf[:n])
		}
	}
	if !deadline.IsZero() && !deadline.After(time.Now()) {
		if err := in.rc.Control(func(fd uintptr) { drain(fd) }); err != nil {
			return nil, err
		}
		return evs, rerr
	}
	if cd, ok := ctx.Deadline(); ok && (deadline.IsZero() || cd.Before(deadline)) {
		deadline = cd
	}
	in.f.SetReadDeadline(deadline)
	// A cancelled ctx interrupts the wait through the deadline. If that
	// function started, it is waited for, so it never outlives this call.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		in.f.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	err := in.rc.Read(drain)
	if !stop() {
		<-fired
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, err
	}
	return evs, rerr
}

// parse appends the events in buf, which holds whole events (the kernel
// never splits one across reads).
func parse(evs []rawEvent, buf []byte) []rawEvent {
	const head = syscall.SizeofInotifyEvent
	for len(buf) >= head {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		m := binary.NativeEndian.Uint32(buf[4:])
		n := int(binary.NativeEndian.Uint32(buf[12:]))
		if head+n > len(buf) {
			break
		}
		name := strings.TrimRight(string(buf[head:head+n]), "\x00")
		buf = buf[head+n:]
		if e, ok := translate(wd, m, name); ok {
			evs = append(evs, e)
		}
	}
	return evs
}

func translate(wd int32, m uint32, name string) (rawEvent, bool) {
	e := rawEvent{wd: wd, name: name, isDir: m&syscall.IN_ISDIR != 0}
	switch {
	case m&syscall.IN_Q_OVERFLOW != 0:
		e.overflow = true
		return e, true
	case m&syscall.IN_MOVE_SELF != 0:
		e.op, e.removeWatch = Gone, true
		return e, true
	case m&(syscall.IN_DELETE_SELF|syscall.IN_UNMOUNT|syscall.IN_IGNORED) != 0:
		e.op = Gone
		return e, true
	}
	if name == "" {
		return e, false // the directory's own metadata
	}
	if m&(syscall.IN_CLOSE_WRITE|syscall.IN_MOVED_TO|syscall.IN_ATTRIB) != 0 || m&syscall.IN_CREATE != 0 && e.isDir {
		e.op |= Write
	}
	if m&(syscall.IN_MOVED_FROM|syscall.IN_DELETE) != 0 {
		e.op |= Remove
	}
	return e, e.op != 0
}
