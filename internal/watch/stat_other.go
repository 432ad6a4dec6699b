//go:build !unix

package watch

import "os"

// fileID reports nothing where FileInfo carries no inode: polling then
// compares type, permission bits, size and modification time.
func fileID(os.FileInfo) (dev, ino uint64, ctime int64) { return 0, 0, 0 }
