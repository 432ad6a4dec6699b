// Package statuslint defines an Analyzer that reports unsafe ways of updating
// JSON state files such as an agent workspace's status.json.
//
// # Analyzer statuslint
//
// statuslint: report bare read-modify-write and in-place writes of JSON state files
//
// It reports two patterns.
//
// 1. A bare read-modify-write: within one function (function literals inside
// it included), a file is read and its bytes decoded as JSON, and later a
// JSON encoding is written to the same path expression, with no lock held
// across the two. Any update another goroutine or process commits in between
// is lost, and a stale copy written back can revert a state (a task marked
// "completed" goes back to "running"). Reads are os.ReadFile and any function
// or method named ReadFile, io.ReadAll or json.NewDecoder of a file opened
// with os.Open / os.OpenFile / a method named Open, status.Read, and helpers
// named ReadStatus or LoadStatus (any case of the first letter); writes are
// any function or method named WriteFile, WriteAtomic, WriteAtomicPerm or
// WriteAtomicFrom given bytes from json.Marshal(Indent), json.NewEncoder or
// Write on a file from os.Create / os.OpenFile, a write to a temp path then
// renamed to the path, and helpers named WriteStatus or SaveStatus.
//
// Helpers with other names are followed through facts: a function that
// returns what it read from, or writes to, a path made of its parameters
// (load(ws) reads filepath.Join(ws, "status.json")) counts, at each call, as
// a read or a write of the path made of the call's arguments, in its own
// package and in the packages that import it.
//
// "The same path" means the same variable, the same constant,
// or the same expression (filepath.Join(ws, "status.json") twice); a local
// variable assigned once stands for its value. For helpers without a path
// argument (ws.ReadStatus(), ws.WriteStatus(st)) the receiver is the path.
// Code inside a function literal passed to status.Mutate or
// (*status.Store).Mutate (package github.com/agentstate/core/status) runs
// under the document's lock and is not reported. Use status.Mutate instead.
//
// 2. An in-place whole-file write of a JSON file: os.WriteFile or
// ioutil.WriteFile, os.Create, or os.OpenFile with O_TRUNC, of a path whose
// last component is a constant ending in ".json" (a constant, a string
// literal, "…" + ".json", filepath.Join(…, "status.json"),
// fmt.Sprintf("%s.json", …)). Also a method Write(path string, …) whose
// first argument is such a path (the upstream Fs.Write was in place).
// The file is truncated, then written: a concurrent reader sees an empty or
// partial document. Use fs.WriteAtomic.
//
// A finding on a line that carries, or follows a line that carries, a
// "//statuslint:ignore" comment is not reported.
package statuslint
