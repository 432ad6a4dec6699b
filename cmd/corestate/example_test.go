package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A shell script's view of corestate, through run: set fields (unknown ones
// too), read them back raw, and branch on the exit code of a bad value.
func Example() {
	dir, err := os.MkdirTemp("", "corestate-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")

	// corestate set status.json status=running runs=1 note='"first run"' reviewer=ana
	run([]string{"set", path, "status=running", "runs=1", `note="first run"`, "reviewer=ana"}, io.Discard, os.Stderr)

	// corestate get status.json note; corestate get status.json runs; ...
	for _, field := range []string{"note", "runs", "reviewer", "pid"} {
		run([]string{"get", path, field}, os.Stdout, os.Stderr)
	}

	// corestate set status.json runs=lots; echo "exit $?"
	code := run([]string{"set", path, "runs=lots"}, io.Discard, io.Discard)
	fmt.Println("exit", code)
	// Output:
	// first run
	// 1
	// ana
	// 0
	// exit 5
}

// A script's safe claim: the guard and the change are one locked step, so
// of two agents racing for a queued task only one gets it, and a task that
// completed is never reverted to running by a late writer.
func Example_guardedClaim() {
	dir, err := os.MkdirTemp("", "corestate-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")
	run([]string{"set", path, "status=queued"}, io.Discard, os.Stderr)

	// corestate set status.json status=running pid=$$ --if status=queued || exit
	claim := func(pid string) int {
		return run([]string{"set", path, "status=running", "pid=" + pid, "--if", "status=queued"}, io.Discard, io.Discard)
	}
	fmt.Println("agent 1 claims: exit", claim("101"))
	fmt.Println("agent 2 claims: exit", claim("102"))

	// corestate incr status.json runs
	run([]string{"incr", path, "runs"}, io.Discard, os.Stderr)
	run([]string{"set", path, "status=completed"}, io.Discard, os.Stderr)
	// A late, unguarded "running" does not revert the completed task.
	fmt.Println("late set running: exit", run([]string{"set", path, "status=running"}, io.Discard, io.Discard))
	for _, field := range []string{"status", "pid", "runs"} {
		run([]string{"get", path, field}, os.Stdout, os.Stderr)
	}
	// Output:
	// agent 1 claims: exit 0
	// agent 2 claims: exit 8
	// late set running: exit 8
	// completed
	// 101
	// 1
}
