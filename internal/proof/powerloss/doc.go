// Package powerloss holds no library code: its test cuts the power, as far
// as a FUSE file system can simulate that, under a process that writes
// documents through fs.WriteAtomic and status.Mutate, and checks that every
// write acknowledged before the cut survives whole.
//
// The file system is LazyFS (a FUSE file system that keeps data not yet
// fsynced in its own cache and drops that cache on command). Each round: a
// writer child replaces one document and creates new ones, printing each
// version once its call returned; at a random moment the test SIGKILLs
// and reaps it, drops LazyFS's cache, unmounts (checking that nothing was
// written to the bare mount point), mounts again and reads every document
// back. Two controls run in the same harness and must lose data: an
// in-place os.WriteFile, and a temp file renamed without fsync.
//
// The transaction variant does the same with status.MutateAll over two
// documents in two directories, cut at a random moment of a commit, and
// recovers as the next locker (status.LoadAll): both documents must be
// whole, at one version, not older than the last acknowledged, with no
// transaction file left. Its control makes the same change without the
// journal, one Mutate per document, and must leave a change half-applied in
// some round.
//
// What this does not prove: LazyFS applies create, rename and unlink to
// its backing directory at once and ignores a directory fsync, so it
// cannot lose a directory entry. A writer that skipped the directory fsync
// would pass here too; that fsync is proven by the syscall-order test in
// package fs (strace).
//
// The test runs when LAZYFS names the lazyfs binary and skips otherwise:
// make powerloss builds LazyFS and runs it (see the README).
package powerloss
