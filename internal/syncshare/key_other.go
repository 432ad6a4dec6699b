//go:build !linux

package syncshare

import "os"

// Other systems have no syncfs that reports errors: every replace syncs
// its own file and directory.
type fsKey struct{}

func sharedSyncKey(*os.File) (fsKey, bool) { return fsKey{}, false }

// Shared reports whether writes on f's file system share their syncs.
func Shared(*os.File) bool { return false }

func syncfs(int) error { return nil }
