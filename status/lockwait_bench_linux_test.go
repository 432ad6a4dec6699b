package status

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// python starts a Python 3 program (another process next to the lock
// file) and returns once it printed its first line.
func python(b *testing.B, prog string, args ...string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", prog}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skip("no /usr/bin/python3:", err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		b.Fatal(err)
	}
	return cmd
}

// BenchmarkUncontendedNextTo: one uncontended Mutate of a document next to
// whose lock file another process holds 10,000 or 100,000 OFD read locks
// (what the replaced wait queue's waiters held), interleaved with one of a
// document without them, then the same with another process opening and
// closing the lock file read-only in a loop (a flood of events) and
// without; reported: each side's mean and their ratio; and the same loop
// on another file (a processor taken away, nothing more). The kernel's
// close of a file walks every byte-range lock on it (80-180 ns each), so
// next to the marks a release keeps its descriptor instead of closing it
// (status/internal/flock, keep_unix.go); the document without them closes
// its descriptor as before.
//
//	go test -run '^$' -bench UncontendedNextTo -benchtime 200x -benchmem -count 6 ./status/
func BenchmarkUncontendedNextTo(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("marks=%d", n), func(b *testing.B) {
			plain, marked := benchPath(b), benchPath(b)
			// One lock over the whole range, then a byte unlocked between
			// every two marks, from the end: each unlock splits the first
			// lock of the holder, where the kernel's walk starts, so n
			// marks take O(n) rather than O(n²) to place.
			python(b, `
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
n, first = int(sys.argv[2]), 1 << 50
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("@hhqqi4x", fcntl.F_RDLCK, 0, first, 2*n - 1, 0))
for i in range(n - 1, 0, -1):
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("@hhqqi4x", fcntl.F_UNLCK, 0, first + 2*i - 1, 1, 0))
print("ready", flush=True)
time.sleep(3600)
`, marked+LockSuffix, strconv.Itoa(n))
			var with, without time.Duration
			for b.Loop() {
				for _, p := range []string{plain, marked} {
					t0 := time.Now()
					if _, err := Mutate(context.Background(), p, func(s *Status) error { s.Runs++; return nil }); err != nil {
						b.Fatal(err)
					}
					if p == marked {
						with += time.Since(t0)
					} else {
						without += time.Since(t0)
					}
				}
			}
			report(b, with, without)
		})
	}
	// flood: another process opens and closes the lock file read-only in
	// a loop; cpu: the same loop on another file, for the part of the
	// cost that is only a processor taken away (two here).
	for _, target := range []string{"flood", "cpu"} {
		b.Run(target, func(b *testing.B) {
			path := benchPath(b)
			other := path + LockSuffix
			if target == "cpu" {
				other = benchPath(b) + LockSuffix
				if _, err := Mutate(context.Background(), other[:len(other)-len(LockSuffix)], func(*Status) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			flooder := python(b, `
import os, sys
print("flooding", flush=True)
while True:
    os.close(os.open(sys.argv[1], os.O_RDONLY))
`, other)
			// The loop runs during one call of each pair and is stopped
			// (SIGSTOP) during the other.
			var with, without time.Duration
			for b.Loop() {
				for _, on := range []bool{true, false} {
					if on {
						flooder.Process.Signal(syscall.SIGCONT)
					} else {
						flooder.Process.Signal(syscall.SIGSTOP)
					}
					t0 := time.Now()
					if _, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs++; return nil }); err != nil {
						b.Fatal(err)
					}
					if on {
						with += time.Since(t0)
					} else {
						without += time.Since(t0)
					}
				}
			}
			flooder.Process.Signal(syscall.SIGCONT)
			report(b, with, without)
		})
	}
}

func report(b *testing.B, with, without time.Duration) {
	n := float64(b.N)
	b.ReportMetric(float64(without.Microseconds())/n, "µs-without")
	b.ReportMetric(float64(with.Microseconds())/n, "µs-with")
	b.ReportMetric(float64(with)/float64(without), "with/without")
	b.ReportMetric(0, "ns/op")
}
