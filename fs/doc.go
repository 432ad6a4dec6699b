// Package fs writes files atomically and durably, inside a sandbox or at
// plain paths.
//
// There is no in-place whole-file write in this package. Every whole-file
// write ([WriteAtomic], [WriteAtomicNoFollow], [WriteAtomicFrom] and the
// methods [Fs.WriteAtomic] and [Fs.WriteAtomicFrom]) replaces the
// destination with one sequence: create ".<base>.<16 hex digits>.tmp" with
// O_EXCL in the destination's own directory; give it the destination's
// owner and mode by descriptor; write; fsync; close; rename it over the
// destination; fsync the directory. What that guarantees, and what it does
// not, is stated once, below.
//
// # Examples
//
// Runnable examples with their output, checked by go test (example_test.go):
// replacing a file (ExampleWriteAtomic) and telling "not written" from
// "written, durability unknown" (ExampleWriteAtomic_durabilityUnknown);
// writing inside a sandboxed root and being refused outside it
// (ExampleFs_WriteAtomic); streaming a large file (ExampleFs_WriteAtomicFrom);
// sweeping a killed writer's temp files (ExampleFs_SweepTemp); creating
// durable directories (ExampleMkdirAll).
//
// # Guaranteed
//
//   - Readers that take no lock see the old content or the new one, never an
//     empty or partial file.
//   - When a write returns nil, the new content survives a crash or power
//     loss (on file systems that honour fsync). Directories created by
//     [MkdirAll] are fsynced too, and [Fs.Remove], [Fs.RemoveAll] and
//     [Fs.Rename] fsync the directories they change.
//   - An existing file keeps its permission bits and, when the writer may
//     set them (root, or a group it belongs to), its owner and group. A new
//     file gets the requested permission minus the umask.
//   - If a write fails before the rename, the destination is untouched and
//     its temp file is removed. A failed fsync is never retried. If only the
//     directory fsync after the rename fails, the error matches
//     [ErrDurabilityUnknown]: the new content is in place but may not survive
//     a power loss. A directory fsync answered with EINVAL or ENOTSUP (some
//     FUSE and network file systems) counts as unsupported, not as failure.
//   - Bad input gets an error naming the operation and the name
//     ("fs: write atomic a/b.json: ..."), as a [*PathError] whose cause
//     matches, with [errors.Is], [ErrInvalidName], [ErrOutsideRoot],
//     [ErrNotRegular], [ErrMountPoint] or the os / syscall error
//     ([os.ErrNotExist] for a missing parent, [syscall.ENOSPC] for a full
//     disk, [os.ErrInvalid] for a nil reader or context...).
//   - Symbolic links at the destination are followed, never replaced: the
//     link's target is replaced atomically and the link stays a link.
//     Through an [Fs] the target must stay inside the root (ErrOutsideRoot
//     otherwise, absolute link targets included).
//   - A destination that is a directory, device, pipe or socket is refused
//     (ErrNotRegular); one that is a mount point (a bind-mounted single file)
//     is refused (ErrMountPoint). Nothing ever falls back to a non-atomic
//     copy. [WriteAtomicNoFollow] refuses a symbolic link at the destination
//     too, for directories that other users can write.
//   - [ReadRegular] reads a file that others may have planted: it refuses
//     anything but a regular file (links are not followed) without blocking
//     on a named pipe or reading a device, and caps the size it reads
//     ([ErrTooLarge]).
//   - A crash can leave a temp file behind; [SweepTemp] removes those older
//     than a given age and touches nothing else.
//
// # Shared syncs
//
// When writes in one process overlap on one file system, they share their
// syncs: instead of each fsyncing its temp file and then its directory, a
// write waits for a syncfs(2) of the whole file system that starts after its
// own write (then after its own rename), run by one of the waiting writes
// for all of them. A file system without a journal then writes its dirty
// metadata in one batch, and a journaling one commits once, where separate
// fsyncs would each pay for it. A write alone on its file system syncs its
// own file and directory.
//
// The transactions of package status get the same for a step that changes
// several files and directories: one sync.
//
// Shared syncs are used on Linux 5.8 and later (before 5.8 syncfs did not
// report write-back errors) for ext2/3/4, XFS and Btrfs; elsewhere every
// write syncs on its own. The guarantees above are unchanged: each write
// returns nil only once its content and its rename are durable. Not
// guaranteed: a write-back error anywhere on the file system since the
// round's oldest descriptor was opened fails every write of that round
// (before its rename: nothing replaced; after it: ErrDurabilityUnknown), and
// a syncfs also writes back other programs' dirty data on the file system,
// so a shared write can take longer when they have much of it.
//
// # Not guaranteed
//
//   - Two concurrent writers of the same file: the last rename wins and the
//     other write is lost. This package makes one write atomic; a
//     read-modify-write needs a lock around it.
//   - Hard links of the destination are not kept (the rename installs a new
//     inode), nor are ACLs, extended attributes or the owner when the writer
//     may not set it (a non-root writer's new file is its own).
//   - The destination's directory must be writable: a writable file in a
//     read-only directory cannot be replaced atomically (nothing changes and
//     the error says so).
//   - Names of the form ".<name>.<16 hex digits>.tmp" are reserved: SweepTemp
//     removes them when they are old enough.
//   - Windows: the rename is MoveFileEx with replacement, which Windows does
//     not document as atomic; a reader that opened the file without
//     FILE_SHARE_DELETE makes the rename fail (transient sharing errors are
//     retried for about 0.3 s); a directory cannot be
//     fsynced, so a power loss just after a write may bring back the old
//     content.
//   - The durability of the storage stack below fsync (disk write caches
//     that lie, network file systems) is outside the package's reach.
//
// # Sandbox
//
// [New] returns an [Fs] confined to a directory with [os.Root]: names are
// slash-separated, relative, and may not leave the root by "..", absolute
// names or symbolic links ([ErrOutsideRoot]), even when a link is swapped in
// concurrently. os.Root does not stop at mount points inside the root.
package fs
