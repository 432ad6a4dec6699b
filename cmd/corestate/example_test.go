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
