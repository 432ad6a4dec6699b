// Command demo runs the bare read-modify-write of a status file, the same
// cycle with atomic writes but no lock, and status.Mutate side by side
// across processes, and prints what each lost. make demo builds and runs it.
//
// Usage:
//
//	demo [--procs N] [--goroutines N] [--updates N] [--readers N] [--dir DIR] [--timeout D]
//
// Run demo -h for what it prints and how it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes, numbered as corestate numbers its own.
const (
	exitOK          = 0
	exitUsage       = 1
	exitTimeout     = 4
	exitDemoFailed  = 6
	exitError       = 7
	exitInterrupted = 130
)

var (
	errUsage      = errors.New("usage error")
	errDemoFailed = errors.New("demo failed")
)

const help = `Usage: demo [flags]

Runs the CONTROL (bare read-modify-write, in-place os.WriteFile, no lock), a
second control with atomic writes but no lock (RMW+rename), and status.Mutate,
one after the other, each with PROCS worker processes of
GOROUTINES goroutines making UPDATES increments each, while READERS goroutines
read the file without a lock. Prints a table with, per side, how it locks and
writes, updates attempted and lost, torn reads by the readers and by the
writers, and updates kept per second. The workers are this program, run again.

Exit codes: 0 status.Mutate lost nothing; 6 it lost an update or saw a torn
read (the controls are expected to lose and are not judged); 4 --timeout
passed; 1 usage error; 7 other error; 130 interrupted.

Flags:
  --procs N        worker processes per side (default 4)
  --goroutines N   writer goroutines per process (default 8)
  --updates N      updates per goroutine (default 100)
  --readers N      lock-free reader goroutines per side (default 2)
  --dir DIR        run in DIR and keep the files (default: a temp dir, removed)
  --timeout D      give up after D, killing the workers (default 1m)
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; tests call it in-process. The first SIGINT or
// SIGTERM cancels the run (its workers are killed and waited for); a
// second one ends the process at once.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer context.AfterFunc(ctx, stop)() // on a signal, restore the default action
	var err error
	if len(args) > 0 && args[0] == workerCommand {
		err = runWorker(ctx, args[1:], os.Stdin, stdout)
	} else {
		err = runDemo(ctx, args, stdout, stderr)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintln(stderr, "demo: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(stderr, "demo: "+oneLine(err.Error()))
	if errors.Is(err, errUsage) {
		fmt.Fprintln(stderr, "demo: run 'demo -h' for usage")
	}
	return exitCode(err)
}

// exitCode maps an error to the documented exit code.
func exitCode(err error) int {
	switch {
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, errDemoFailed):
		return exitDemoFailed
	case errors.Is(err, context.DeadlineExceeded):
		return exitTimeout
	}
	return exitError
}

// newFlags returns a flag set whose own messages are discarded: errors are
// reported in one line.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args, printing the help to out for -h.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(out, help)
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: demo takes no arguments, got %q", errUsage, fs.Args())
	}
	return nil
}

// oneLine keeps an error to one line of stderr.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
