package main

import (
	"io"
	"strconv"
	"testing"
)

// The cost of a guard and of incr next to a plain set, in the same run:
// each iteration is one locked, durable read-modify-write of the file.
func BenchmarkSetPlain(b *testing.B) {
	path := tempFile(b, "status.json")
	for i := 0; b.Loop(); i++ {
		mustRun(b, "set", path, "status=running", "runs="+strconv.Itoa(i))
	}
}

func BenchmarkSetGuarded(b *testing.B) {
	path := tempFile(b, "status.json")
	mustRun(b, "set", path, "status=running", "runs=0")
	for i := 0; b.Loop(); i++ {
		mustRun(b, "set", path, "runs="+strconv.Itoa(i+1), "--if", "status=queued,running", "--if", "runs="+strconv.Itoa(i))
	}
}

func BenchmarkIncr(b *testing.B) {
	path := tempFile(b, "status.json")
	for b.Loop() {
		mustRun(b, "incr", path, "runs")
	}
}

// BenchmarkGetThenSet is what a script did before incr: two commands, one
// unlocked read and one locked write, and not safe.
func BenchmarkGetThenSet(b *testing.B) {
	path := tempFile(b, "status.json")
	mustRun(b, "set", path, "runs=0")
	for i := 0; b.Loop(); i++ {
		mustRun(b, "get", path, "runs")
		mustRun(b, "set", path, "runs="+strconv.Itoa(i+1))
	}
}

func mustRun(b *testing.B, args ...string) {
	b.Helper()
	if code := run(args, io.Discard, io.Discard); code != exitOK {
		b.Fatalf("%q: exit %d", args, code)
	}
}
