package syncshare

import (
	"errors"
	"os"
	"syscall"
)

// A SyncPoint makes durable, in one step, changes that a caller makes to
// several files and directories itself: a multi-file commit protocol (such
// as the transactions of package status) that must know a set of changes is
// on disk before it takes its next step. [BeginSync] is called before the
// changes, [SyncPoint.Sync] after them.
//
// On a file system where writes share their syncs (see the package doc),
// Sync waits for one syncfs(2) that starts after the caller's changes,
// shared with the writes of this process in flight on that file system, or
// runs one itself: one sync however many files and directories changed.
// Elsewhere it fsyncs each file it is given and each directory.
type SyncPoint struct {
	dirs []syncDir
}

type syncDir struct {
	f   *os.File
	seq uint64 // open order, for a shared round (see Share.Sync)
	sh  *Share // nil when this file system's syncs are not shared
	key fsKey
}

// BeginSync opens the directories in which the caller is about to create,
// write, rename or remove files, so that Sync can make those changes
// durable. Call it before the changes: a shared sync reports the write-back
// errors of its file system since its oldest member's directory was opened.
// Repeated names are opened once.
func BeginSync(dirs ...string) (*SyncPoint, error) {
	p := &SyncPoint{}
	if !DirSync {
		return p, nil
	}
	seen := make(map[string]bool, len(dirs))
	for _, name := range dirs {
		if seen[name] {
			continue
		}
		seen[name] = true
		f, err := os.Open(name)
		if err != nil {
			p.Close()
			return nil, err
		}
		d := syncDir{f: f, seq: NextSeq()}
		if key, ok := sharedSyncKey(f); ok {
			d.key, d.sh = key, join(key)
		}
		p.dirs = append(p.dirs, d)
	}
	return p, nil
}

// Sync makes durable the data written through each of files and every
// entry created, renamed or removed in the directories of [BeginSync] since
// it was called. Each file must be in one of those directories and must
// have been opened before the writes it covers. It returns the first error
// (a write-back error means the changes may not be on disk; do not retry
// the sync, redo the changes). Sync closes the directories: call it once.
func (p *SyncPoint) Sync(files ...*os.File) error {
	defer p.Close()
	var errs []error
	shared := map[fsKey]*syncDir{} // one round per shared file system
	for i := range p.dirs {
		d := &p.dirs[i]
		if d.sh == nil {
			continue
		}
		if first, ok := shared[d.key]; ok && first.seq < d.seq {
			continue
		}
		shared[d.key] = d
	}
	for _, f := range files {
		if key, ok := sharedSyncKey(f); ok && shared[key] != nil {
			continue // covered by its file system's round
		}
		errs = append(errs, f.Sync())
	}
	for i := range p.dirs {
		d := &p.dirs[i]
		if d.sh == nil {
			errs = append(errs, unsupported(d.f.Sync()))
		}
	}
	for _, d := range shared {
		fd := int(d.f.Fd())
		errs = append(errs, d.sh.Sync(fd, d.seq, func() error { return syncFS(fd) }))
	}
	return errors.Join(errs...)
}

// Close releases the directories without syncing, after a failure. It may
// be called more than once, and after Sync.
func (p *SyncPoint) Close() error {
	var err error
	for _, d := range p.dirs {
		d.sh.Leave()
		if cerr := d.f.Close(); err == nil {
			err = cerr
		}
	}
	p.dirs = nil
	return err
}

// unsupported drops the error of a directory fsync that the file system
// does not support (EINVAL, ENOTSUP: FUSE, network, some overlays).
func unsupported(err error) error {
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}
