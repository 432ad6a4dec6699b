//go:build unix

package syncshare

// DirSync: on Unix a directory opened read-only can be fsynced, which makes
// its entries (a rename, a new name) durable.
const DirSync = true
