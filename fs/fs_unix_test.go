//go:build unix

package fs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFsKeepsOwnerAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a file owned by someone else")
	}
	fsys, dir := newFs(t)
	p := filepath.Join(dir, "owned")
	mustWrite(t, p, "old", 0o640)
	if err := os.Chown(p, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteAtomic("owned", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1234 || st.Gid != 5678 || fi.Mode().Perm() != 0o640 {
		t.Fatalf("owner %d:%d mode %v, want 1234:5678 0640", st.Uid, st.Gid, fi.Mode().Perm())
	}
}
