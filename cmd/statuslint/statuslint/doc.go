// Package statuslint defines an Analyzer that reports unsafe ways of updating
// state and configuration files: a JSON status.json, a YAML or TOML
// configuration, viper's configuration file, a kubeconfig.
//
// # Analyzer statuslint
//
// statuslint: report bare read-modify-write and in-place writes of JSON state files
//
// It reports three patterns.
//
// 1. A bare read-modify-write: within one function (function literals
// inside it included), a file's content is read and decoded, and later in
// the source the same file is written, and neither happens inside a
// function literal passed to a function of package
// github.com/agentstate/core/status (Mutate, Store.Mutate, Transform...),
// or under a file lock held since the read. Whatever lies between the two
// (a sleep, a process spawn, other calls), an update that another
// goroutine or process commits in between is lost, and a stale copy
// written back can revert a state (a task marked "completed" goes back to
// "running"). The write need not carry the value read: a decision made on
// a read followed by the write of a fresh document is reported too, since
// the state it was based on may have changed in between; a write reached
// only where the read failed or found nothing (an error, a nil document,
// a false "found" result: a cache filled after a miss, a document created
// when there was none) is not.
//
// 2. The same cycle across a program, when the read and the write share no
// call chain (see Whole programs below): a document loaded once, at
// start-up, and written back later by a command; and a decision on a
// first read before a call of a function that reads the file again and
// writes it under its own lock.
//
// 3. An in-place whole-file write of a JSON file: a truncating write
// (os.WriteFile, os.Create, os.OpenFile with O_TRUNC, or a helper that
// makes one, at any depth) of a path whose last component is a constant
// ending in ".json" (a literal, "…" + ".json", a join of one,
// fmt.Sprintf("%s.json", …), or a path helper that returns one of those).
// The file is truncated, then written: a concurrent reader sees an empty
// or partial document. Use fs.WriteAtomic.
//
// A finding names the file (the path as the program spells it when that
// says which file, such as filepath.Join(dir, "status.json"); else the
// file's name and the expression it is made of, "status.json in dir";
// "viper's configuration file", "the kubeconfig"), the line and the call of
// the read, the call of the write, and what to use for the document's
// format: status.Mutate for JSON, status.Transform with the program's own
// codec for YAML, TOML and viper's file, client-go's own lock around the
// cycle for a kubeconfig (status.Transform's lock file would block
// kubectl, which creates <file>.lock exclusively); status.MutateAll or
// status.TransformAll when one function changes several documents. One
// write call gives one finding, naming every file it writes back; a
// function gets one finding per file, and one more for each call of a
// helper that saves the file again after a reported save (each writes
// back the same stale document).
// docs/MIGRATION.md shows each rewrite.
//
// # Reads, decodes and writes
//
// Reads and writes are recognised by what the code does, never by a
// function's name. The analysis runs on SSA form (the buildssa pass): each
// value carries what it may hold (a path, a file handle, a file's content,
// a decoded document), through assignments, struct fields, package-level
// variables assigned once, closures, interfaces and calls.
//
// The standard library is not analysed (-std analyses it, for the crash
// test). What calls of the libraries programs touch files with do is one
// table, library.go, keyed by import path and name: the file APIs of the
// standard library, the decoders and encoders of encoding/json, xml and
// gob, the YAML libraries (gopkg.in/yaml.v2/v3, sigs.k8s.io/yaml,
// go.yaml.in, ghodss, goccy) and TOML (BurntSushi, go-toml), afero and
// go-billy, viper (below), koanf, INI files (gopkg.in/ini.v1), client-go's
// kubeconfig (below), the file locks, net/http's requests (a response holds
// what a server sent, nothing of a file that the client, its proxy or the
// URL was made from) and this module's status and fs packages. A library is
// added there, with the kinds of effect the table has, without touching the
// analysis. Everything else, the framework a service is built on
// included, is analysed from its source: a decode is a call that is given
// content and fills memory it can reach, or a function whose result is a
// structured value made from a file's content that it read or was given as
// bytes or a reader (a parser that builds its result from scanned lines,
// such as git-todo-parser's todo.Parse); a write is a write to a handle
// opened for writing or a rename onto the path, at any depth. Numbers
// carry no document: what a number holds is not followed (unrolled
// arithmetic, such as golang.org/x/crypto/argon2's, would otherwise be
// followed value by value).
//
// A result is structured when it is a struct or a map, a pointer to one,
// or a slice or array of those, that carries text or a map (what a parser
// takes out of a document; a structure of numbers measures its input), and
// is neither a type of the standard library nor a struct that holds an
// interface or bytes, directly or in a struct it holds (a box such as a
// framework's Result{Value any, OK bool}, which carries the raw text it is
// given; a decoder or encoder holding its reader or writer; a view of the
// bytes it was given). A method of a reader that returns a structure (a
// Stat) describes it. Text, bytes, a []string and scalars stay raw: a
// text rewrite (strings operations on a file's content, written back) and
// a one-value file (a pid read with strconv.Atoi) are not
// read-modify-writes of a document, and are not reported. A string given to a function is taken
// for a value, not a document: a structure built from one (a namespace
// stored in a YAML node) is not a parse.
//
// viper finds its configuration file by search path and name, so a viper
// instance stands for its document: one that was read (ReadInConfig,
// MergeInConfig) carries its document wherever it goes (struct fields,
// parameters, interfaces), and a write by it (WriteConfig,
// SafeWriteConfig, and WriteConfigAs or SafeWriteConfigAs under any path)
// is a write of the document it read, and so is its AllSettings encoded by
// the program and written to a file. The package-level functions use
// viper's own instance. An instance that read another instance's settings
// (AllSettings, encoded by a stream encoder, given to ReadConfig or
// MergeConfig) carries that instance's document: a copy without a key,
// written back, is a write-back of it. A read followed by a write is
// reported whether or not Set changed anything in between, as for any
// read-modify-write; a write by an instance that read nothing (a fresh
// configuration, or one read from a document the program made) is not.
//
// A read of a viper instance's document that comes after a function's
// writes (every path to it passes one) and is followed by no write of it
// refreshes what was written (viper re-read after WriteConfig): for the
// function's callers the write is still one of the document read before,
// elsewhere if not by them. A read back of other files, and one in the
// function that wrote, stays a read.
//
// client-go's loading rules find the kubeconfig (KUBECONFIG, ~/.kube/config
// or an explicit path), so what is read through them (GetStartingConfig of
// clientcmd.ConfigAccess, PathOptions or the loading rules, the loading
// rules' Load, a deferred client configuration's RawConfig) and what
// ModifyConfig writes are one document, the kubeconfig. ModifyConfig locks
// only its own re-read: a caller's earlier read is outside it.
// LoadFromFile and WriteToFile read and write the file they are given.
//
// A call through an interface does what every implementation in the
// program does; a call through a function value, what every function it
// may hold does. A write that only some implementations make counts when
// the call is given that file's document (a configuration object, loaded
// once, whose Write saves it); a stream (a reader or a writer, such as a
// response body) is given no document, so closing one writes only the file
// it was opened on. A function value whose functions are not in
// sight (kept in a struct field that a package the caller does not import
// fills, such as a command factory's loader of the configuration) reads
// and returns what every function of the program with the same signature
// does when it returns a file's content as a type the program defines;
// one whose results are all types of the standard library (func() ([]byte,
// error)) says nothing of what it reads and stays opaque.
//
// A document may keep the path it was loaded from in a field of its own and
// save itself there: a method's write to a field of its receiver is a
// write of the file the receiver was decoded from. A path resolved by
// filepath.EvalSymlinks, Abs or Clean names the file its argument names.
//
// # Facts: helpers of any depth, in any package
//
// Every function gets a fact that says, in terms of its parameters,
// receiver and free variables, the paths it returns, the content (raw or
// decoded) of which file it returns or stores, which argument it decodes
// into which, the files it writes or truncates, and the locks it leaves
// held. Facts are templates of bounded size over the function's inputs;
// within a package, functions learn from each other's facts in a bounded
// number of rounds, so recursion and long helper chains end; a field
// repeated in a row in a key (a type that wraps a value of an interface it
// implements and calls itself through it) is widened to one, so such
// recursion settles too. With go vet
// the facts of dependencies come from their own vet runs; the standalone
// command computes them itself.
//
// # The same file
//
// A read and a write are of the same file when their paths have the same
// key: the same variable (a variable assigned once stands for its value),
// the same constant, the same package-level variable or field path, or
// structurally the same expression in which a path helper's call stands
// for the path it returns. ReadStatusResult(dir) and writeStatusResult(dir,
// st) therefore meet at WorkspaceStatusPath(dir); reads of one workspace
// and writes of another do not. A path given to a file system rooted in a
// directory (go-billy's, this module's fs.Fs) names a file under that file
// system: the same name in two repositories is two files.
//
// # Locks
//
// A read and a write are not reported when a file lock is held at both and
// was not released between them: syscall.Flock, unix.Flock (LOCK_EX or
// LOCK_SH; LOCK_UN releases), unix.FcntlFlock (F_WRLCK/F_RDLCK; F_UNLCK
// releases), windows.LockFileEx, and a lock file created with
// O_CREATE|O_EXCL (client-go's and kind's kubeconfig lock), released by
// removing it (os.Remove of that file or of a *.lock file). -lockers names
// a program's own lock functions: the lock a call of one takes is held
// until the calling function returns. Locks are a must-analysis over the
// control-flow graph: a lock is held where every path to it takes it, so a
// try-lock counts only on the paths where it succeeded. Wrappers are
// followed through facts, which is how gofrs/flock (Lock, TryLock,
// TryLockContext), lockedfile and status.Mutate are seen without a model of
// their own. A read-modify-write inside a function passed to a function
// of package status (Mutate, Store.Mutate, Transform, MutateAll...) is not
// reported.
//
// # Whole programs
//
// Command-line programs load their configuration once, at start-up (main,
// an init function, cobra.OnInitialize, a PersistentPreRun), and a command
// changes and saves it later: the read and the write share no call chain.
// The analysis stays one package at a time, with facts (go vet's model):
// a package-level variable's fact says which documents it holds, a
// function's fact which files it reads, and each package knows where it
// and the packages it imports read each file. A write of a file that the
// writing function does not read is then reported as a stale write-back
// when the file is read elsewhere in the package or its imports and the
// write carries that document (a value decoded from it, kept in a
// package-level variable or in an object one holds, or a viper instance
// that read it; viper's document whenever viper writes it, since it writes
// back every value it read). A function that reads a file and writes it
// back under its own lock tells its callers so: a caller that decided on a
// structured document it read first is reported at the call. So does one
// that reads and writes back viper's document without a lock (reported
// itself too): a caller that read that document first and makes the call
// only on some paths decided on it, since viper's getters read the
// instance. A path
// helper that returns a path it also keeps in a package-level variable
// names the file that variable names, so a writer that uses the variable
// meets the reader that used the helper. Such a finding names one read of
// the file: a library call in a function that only loads it before a
// helper's read, a refresh after a write or a test's set-up.
//
// A type may load and save itself: one method reads the file a field of
// its receiver names into the receiver, another writes the receiver back
// there. A call of the saving method on an object that the calling
// function did not make (a parameter, a field or a getter's result of one,
// a package-level variable, behind an interface or not), in a function
// that does not load it, is a write-back of the document loaded elsewhere
// (at start-up); a chain of methods that save their own object is
// reported once, at the innermost save, and a method that forwards to the
// same method of a value it wraps is not a save. A loader given its path that
// decodes into a package-level variable fills it, for each caller, with
// the document of the file the caller names. A path chosen on several
// paths (a variable that a flag sets, else a default) may name any of
// them: a save helper that chooses the same way writes each. A function
// that reads a document, saves it and keeps it (returns it, stores it in
// its receiver or a package-level variable) reads it for its callers too:
// a constructor that runs such a set-up and saves again is reported. A
// []string or a number taken out of a document does not carry the
// document to a write.
//
// The other way, a pass over the whole program in the standalone command,
// was not taken: the standalone command already holds every package in
// memory (about 4 GB on kubectx, which imports the Kubernetes client;
// more than 15 GB on k9s), while go vet's processes stay below 0.4 GB, and
// the shapes found by facts are those of the test data and the measured
// projects (docs/BENCHMARKS.md).
//
// # Test files
//
// In a _test.go file, an in-place write is reported only when goroutines
// may run meanwhile (the function runs in a goroutine, or starts one
// before the write): writing a fixture before any goroutine starts is
// set-up, not a finding. A read-modify-write is reported in test files as
// elsewhere; -test=false leaves test files out.
//
// # Flags
//
// -readers and -writers name functions whose reads or writes the analysis
// cannot see (a document store behind a network client, say), as
// comma-separated pkg.Func, pkg.(*T).Method or pkg.T.Method, or
// pkg.Interface.Method for a method of an interface; with go vet, pass
// them after -vettool. A reader returns the decoded document named by its
// first string argument, or else by its receiver; a writer writes it.
// -lockers names functions that take a lock of the program's own (see
// Locks), the same way.
//
// -fix changes nothing: no finding has a rewrite that is right in every
// program (the document's type, its codec and the handling of its errors
// are the program's), so the standalone command with -fix prints the
// findings, says that none was fixed, and exits as without -fix (3 when
// there are findings).
//
// # Not followed
//
// Where the analysis cannot connect a read to a write, it records the
// place: a call through an interface method whose implementations are not
// in the package or its imports, a call of a function value (not a
// parameter) it cannot resolve that is given a document or may be a
// loader, a write of a file that the program names and that nothing in
// sight reads, and helpers that did not settle in the rounds a package
// gets. The standalone command looks each up across the whole program and
// lists those that remain after the findings (see the command's
// documentation); with -unfollowed each place is reported as a finding,
// which is how go vet, whose protocol carries findings only, shows them.
//
// # Not seen, and seen wrongly
//
// Measured on code nobody on this team wrote (docs/BENCHMARKS.md has the
// corpus, the commands and the figures):
//
//   - A lock is not tied to the file it guards: a lock on any file held
//     across the read and the write silences the finding.
//   - A document that main loads into an object it then passes to the
//     commands as a parameter (not a package-level variable, nor an object
//     one holds) is not followed from its load to its save, unless the
//     object's type loads and saves itself (above); nor is a read in a
//     package that the writing package does not import (with go vet,
//     facts flow only along imports). A self-loading object's method that
//     writes a default file when there is none is taken for a save.
//   - A document whose elements keep the file they were read from, saved
//     file by file under those names (a map keyed by the path), is not
//     followed: the path a write uses comes out of the document.
//   - The same file under two names meets only through a package-level
//     variable: directly, or through a helper of its package that returns
//     the variable's path or one of the files it lists (split, picked,
//     cleaned, taken apart and joined again). A name derived another way
//     (another variable, the environment) is another file.
//   - All of client-go's loading rules are one kubeconfig: an explicit
//     path given to one ConfigAccess and the default of another are taken
//     for the same document.
//   - A function value whose functions are not in sight is taken for
//     every loader of the program with its signature: when it holds a
//     function that reads nothing, what follows can be reported wrongly.
//     One whose results are all types of the standard library is opaque,
//     and so is one whose loaders are outside the package's import graph:
//     a document loaded through it is not seen (gh's command packages
//     import the configuration's implementation only from their tests, so
//     with -test=false 7 of its 10 read-modify-writes are missed).
//   - A viper instance that was read and then written with
//     WriteConfigAs to another file (an export) is reported: the instance,
//     not the path, stands for the document.
//   - A path chosen among several values (a directory picked from one of
//     a few fields by a switch) has a key only inside its function: a
//     helper that loads a document from it and returns it tells its
//     callers nothing, so their save of it is missed (vfox's use and
//     unuse of .vfox.toml).
//   - A function that writes one file back several times with writes of
//     its own (twice in a row, or in two branches), rather than through a
//     helper's save, gets one finding, at the first write; a
//     finding at a call names the caller's line, not the write inside the
//     callee.
//   - The same file under two spellings (filepath.Join(ws, "status.json")
//     and ws+"/status.json") is two files; a variable reassigned to another
//     path between the read and the write is taken for one.
//   - A document kept inside another value is not followed to the path it
//     keeps: docker/cli's credential store holds the configuration in a
//     field and saves it through an interface, so docker login and logout
//     are missed. Nor is a writer that keeps its path in a field and
//     renames onto it in Close (docker's context metadata). (docker/cli:
//     5 of its 10 read-modify-writes missed.)
//   - A stale copy assigned inside Mutate's function literal (*s = stale)
//     is not reported.
//   - A rewrite of raw text is not reported, even of a file that others
//     update (lazygit's PrependStrToTodoFile: git-rebase-todo read,
//     prepended to and written back), nor is a document parsed inline
//     rather than by a function that returns it, or by a parser given the
//     text as a string.
//   - In a loop, a variable made in each iteration is one key: a write in a
//     later iteration can be taken for the write-back of an earlier read,
//     and the finding then names that write (lazygit's loadUserConfig:
//     reported at the os.Create of a missing file, while its real
//     read-modify-write is the migration's write further down).
//   - An in-place write is reported for any truncating write of a .json
//     path, whether or not anything reads it meanwhile.
//   - A long-lived object that reads small files of its own (a colour
//     scheme, a directory's entries) and is handed to a command
//     interpreter is taken for a document, and the interpreter's writes
//     (a file copied into the current directory, a hook run) for its
//     write-back: a file manager gave dozens of such findings, each naming
//     a path expression rather than a file.
//   - A loader that writes a default only when the file is missing, and
//     otherwise returns what it already holds, is named as the write of a
//     decision made on the document; a cache filled with content fetched
//     after a miss is reported when the fetched value passes through the
//     object that was read.
//
// Every report on whole real repositories, classified (docs/BENCHMARKS.md
// has the commits and the commands):
//
//   - kubectx, 7 read-modify-writes: real (the kubeconfig parsed, changed
//     and saved through the same handles, no lock; kubectl's own writers
//     take config.lock, kubectx does not).
//   - dappco.re/go, 1: real (ErrorPanic.appendReport: the crash-report
//     JSON, read, appended to and rewritten under an in-process mutex only).
//   - The agent services on that framework, 9: real (ReadStatusResult,
//     change, writeStatusResult or WriteStatus).
//   - helm, 1 read-modify-write: real (repo remove, repositories.yaml; repo
//     add, under a gofrs/flock try-lock, is not reported). 2 in place:
//     values.schema.json written into a chart directory being created:
//     true to the rule, no hazard in practice.
//   - exercism/cli, 1 read-modify-write: real (configure: the user's
//     configuration read by viper, changed, and saved by a persister
//     behind an interface); 1 in place: .exercism/metadata.json written
//     once on download: true to the rule, no hazard in practice.
//   - cobra-cli: nothing reported, nothing to report.
//   - lazygit (pkg/utils, pkg/config), 8 read-modify-writes: real (five
//     edits of git-rebase-todo through todo.Parse and todo.Write during an
//     interactive rebase, no lock; the user-config migration, at the wrong
//     line, above; the pull-request cache, loaded once and saved whole
//     with one repository's entry changed, under an in-process mutex only,
//     by the application and by a test's goroutines); 1 in place: that
//     cache saved from goroutines in a test: real.
//   - docker/cli, 5 read-modify-writes: real (context use, context rm and
//     the example plugin: config.json loaded through ConfigFile(), changed
//     and saved; manifest annotate and manifest create --amend: the local
//     manifest read, changed and written back in place).
//   - gh (whole repository), 19
//     read-modify-writes at 10 sites: real (config set, alias set, delete
//     and import, auth login, logout and refresh: config.yml and hosts.yml
//     loaded through the factory's Config, changed and saved by Write; the
//     config migration and auth switch; each reported once per file; the
//     update checker's state file, read, decided on and rewritten).
//
// Test data of package limits, and of the corpus module's locks, parsers
// and viperconf packages, pins each of these.
//
// A finding on a line that carries, or follows a line that carries, a
// "//statuslint:ignore" comment is not reported.
package statuslint
