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
	"sync"
	"syscall"
	"time"

	"github.com/agentstate/core/status"
)

// Exit codes; see the package doc. Scripts depend on them: never renumber.
const (
	exitOK       = 0
	exitUsage    = 1
	exitNotFound = 2
	exitCorrupt  = 3
	exitTimeout  = 4
	exitBadField = 5
	// 6 is the exit code of the demo (cmd/demo) when status.Mutate
	// fails there; corestate does not use it.
	exitError       = 7
	exitConflict    = 8
	exitNotCorrupt  = 9
	exitExists      = 10
	exitInterrupted = 130
)

// Sentinels that select an exit code. They are wrapped, never printed bare.
var (
	errUsage    = errors.New("usage error")
	errNotFound = errors.New("not found")
	errBadField = errors.New("bad field")
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr, os.Exit))
}

// run is the whole command: it parses args, does the work, writes results to
// stdout and errors to stderr, and returns the exit code. Tests call it
// in-process.
func run(args []string, stdout, stderr io.Writer) int {
	return runMain(args, stdout, stderr, nil)
}

// graceAfterSignal is how long a command may go on after SIGINT or SIGTERM
// (to finish a write it has started) before the process ends anyway.
const graceAfterSignal = time.Second

// runMain is run with the signal handling of the command: the first SIGINT
// or SIGTERM cancels the context, so a wait for the lock ends at once and
// nothing is written; the signals' default action comes back, so a second
// one ends the process at once; and when exit is not nil (the real
// process), anything still running graceAfterSignal later — a write to a
// stalled output pipe or disk — is ended by exit(exitInterrupted). A
// process that ends holds no lock: the kernel drops its flock.
func runMain(args []string, stdout, stderr io.Writer, exit func(int)) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		cancel()
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		if exit == nil {
			return
		}
		grace := time.NewTimer(graceAfterSignal)
		defer grace.Stop()
		select {
		case <-grace.C:
			fmt.Fprintln(stderr, "corestate: interrupted")
			exit(exitInterrupted)
		case <-done:
		}
	})
	defer wg.Wait()
	defer close(done)
	defer signal.Stop(sigs)
	err := dispatch(ctx, args, stdout, stderr)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	// Once interrupted, whatever failed failed because of the signal.
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "corestate: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(stderr, "corestate: "+errorLine(err, args))
	if errors.Is(err, errUsage) {
		fmt.Fprintln(stderr, "corestate: run 'corestate help' for usage")
	}
	return exitCode(err)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printHelp(stderr, "")
		return fmt.Errorf("%w: no command", errUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "get":
		return cmdGet(ctx, rest, stdout)
	case "set":
		return cmdSet(ctx, rest, stdout)
	case "incr":
		return cmdIncr(ctx, rest, stdout)
	case "tx":
		return cmdTx(ctx, rest, stdout)
	case "sweep":
		return cmdSweep(rest, stdout)
	case "fsck":
		return cmdFsck(rest, stdout)
	case "list":
		return cmdList(ctx, rest, stdout, stderr)
	case "quarantine":
		return cmdQuarantine(ctx, rest, stdout)
	case "reap":
		return cmdReap(ctx, rest, stdout)
	case "owner":
		return cmdOwner(rest, stdout)
	case "slot":
		return cmdSlot(ctx, rest, stdout)
	case "help", "-h", "-help", "--help":
		topic := ""
		if len(rest) > 0 {
			topic = rest[0]
		}
		if !printHelp(stdout, topic) {
			return fmt.Errorf("%w: no help for %q", errUsage, topic)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// exitCode maps an error to the documented exit code. Corruption is checked
// before "not found" and timeouts because it is the most specific.
func exitCode(err error) int {
	var exists *existsError
	switch {
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.As(err, &exists):
		return exitExists
	case errors.Is(err, errNotCorrupt):
		return exitNotCorrupt
	case errors.Is(err, status.ErrConflict):
		return exitConflict
	case errors.Is(err, status.ErrCorrupt):
		return exitCorrupt
	case errors.Is(err, errBadField):
		return exitBadField
	case errors.Is(err, context.DeadlineExceeded):
		return exitTimeout
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errNotFound), errors.Is(err, os.ErrNotExist):
		return exitNotFound
	}
	return exitError
}

// oneLine keeps a detail of fsck's report to one line (errors go through
// errorLine).
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
