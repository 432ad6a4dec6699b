//go:build !unix

package syncshare

// DirSync: Windows cannot flush a directory handle; NTFS journals a
// rename's metadata itself, so a power loss right after a replace returns
// may still bring back the old content (documented in package fs).
const DirSync = false
