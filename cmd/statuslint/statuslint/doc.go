// Package statuslint defines an Analyzer that reports unsafe ways of updating
// JSON state files such as an agent workspace's status.json.
//
// # Analyzer statuslint
//
// statuslint: report bare read-modify-write and in-place writes of JSON state files
//
// It reports two patterns.
//
// 1. A bare read-modify-write: within one function (function literals
// inside it included), a file's content is read and decoded, and later in
// the source the same file is written, and neither happens inside a
// function literal passed to status.Mutate or (*status.Store).Mutate
// (package github.com/agentstate/core/status). Whatever lies between the
// two (a sleep, a process spawn, other calls), an update that another
// goroutine or process commits in between is lost, and a stale copy written
// back can revert a state (a task marked "completed" goes back to
// "running"). The write need not carry the value read: a decision made on a
// read followed by the write of a fresh document is reported too, since the
// state it was based on may have changed in between. Use status.Mutate.
//
// 2. An in-place whole-file write of a JSON file: os.WriteFile or
// ioutil.WriteFile, os.Create, or os.OpenFile with O_TRUNC, of a path whose
// last component is a constant ending in ".json" (a constant, a string
// literal, "…" + ".json", a join — filepath.Join or any function whose name
// contains Join or Path — ending in "status.json", fmt.Sprintf("%s.json",
// …), or a path helper that returns one of those). Also a method
// Write(path string, …) whose first argument is such a path (a method
// of that name commonly writes in place). The file is truncated, then written: a concurrent
// reader sees an empty or partial document. Use fs.WriteAtomic.
//
// # Reads, decodes and writes
//
// Reads and writes are recognised by what functions do, not by their names.
//
// A file's content comes from os.ReadFile, ioutil.ReadFile, os.Open and
// os.OpenFile (for reading), and the functions of this module's package fs
// that open a file or return its bytes (Open, ReadFile...); status.Load and
// (*status.Store).Load return a decoded document. Content flows through
// assignments, conversions (string(data)), struct fields and composite
// literals (a Result whose Value holds the text), type assertions, append,
// and the results of any call that nothing else describes (which hold what
// its arguments hold; errors and booleans hold nothing).
//
// A decode is a call that is given content and a pointer, a map or an
// empty interface to fill: json.Unmarshal, a Decoder's Decode, a YAML
// library's Unmarshal, a helper like core.JSONUnmarshalString(s, &st).
// Arguments to a variadic parameter (fmt.Printf) do not count, and calls
// named Write…, write…, Encode, Flush, Fprint…, Copy or ReadFrom are
// writers, not decoders.
//
// A write is os.WriteFile, ioutil.WriteFile, fs.WriteAtomic and
// (*fs.Fs).WriteAtomic (and their From and NoFollow forms), a call named as
// above on a handle from os.Create or os.OpenFile (for writing), and
// os.Rename of a file written before (a temp file) to the path.
//
// Methods of interfaces have no body to follow: those named ReadFile,
// WriteFile and WriteAtomic… are known by name (the first string argument is
// the path); others, and calls through struct fields or local variables of
// function type, are named with the flags below.
//
// # Facts: helpers of any depth, in any package
//
// Every function of an analysed package, and every package-level variable
// of function type initialised with a function or a function literal, gets
// a fact that says, in terms of its parameters and receiver:
//
//   - the path it returns, if it is a path helper
//     (WorkspaceStatusPath(dir) returns core.Path(dir, "status.json"));
//   - the content, raw or decoded, of which file it returns in which result
//     or stores through which pointer parameter (ReadStatusResult(dir)
//     returns the decoded document of fs.path(WorkspaceStatusPath(dir)));
//   - which parameter's content it decodes into which result or parameter
//     (core.JSONUnmarshalString decodes $0 into $1);
//   - the paths it writes (writeStatusResult writes the same path).
//
// A call then does what its callee's fact says, with its own arguments in
// place of the parameters, in the callee's package and in every package
// that imports it (go vet passes the facts between packages; the standalone
// command computes them itself). Within a package, functions learn from
// each other's facts in rounds, so wrappers of any depth are followed. A
// function that reads and writes the same file is reported itself and
// passes neither access on. A variable's fact is that of its initial
// value, even if tests swap it.
//
// The standard library is not analysed: its file APIs are known by name.
//
// # The same file
//
// A read and a write are of the same file when their paths have the same
// key: the same variable (a local variable assigned once stands for its
// value), the same constant value, the same package-level variable, or
// structurally the same expression, in which the call of a path helper
// stands for the path it returns. ReadStatusResult(dir) and
// writeStatusResult(dir, st) therefore meet at the same key; reads of one
// workspace and writes of another do not.
//
// # Flags
//
// -readers and -writers name functions whose reads or writes static
// analysis cannot see, as comma-separated pkg.Func, pkg.(*T).Method or
// pkg.T.Method, or pkg.Interface.Method for a method of an interface; with
// go vet, pass them after -vettool. A reader returns the decoded document
// named by its first string argument, or else by its receiver; a writer
// writes it.
//
// # Not seen, and seen wrongly
//
// The read and the write must be connected in one function: a decoded value
// handed to another goroutine or stored in a global and written back
// elsewhere is not reported, nor a stale copy assigned inside Mutate's
// function literal (*s = stale). The same file under two spellings
// (filepath.Join(ws, "status.json") and ws+"/status.json"), or through two
// instances of a wrapper (two package-level variables with the same root),
// is two files. The analyzer does not model locks: a read-modify-write under
// the caller's own mutex is reported, and so is one through a variable
// reassigned to another path between the read and the write. Test data of
// package limits pins each of these.
//
// A finding on a line that carries, or follows a line that carries, a
// "//statuslint:ignore" comment is not reported.
package statuslint
