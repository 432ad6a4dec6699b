//go:build darwin || dragonfly || freebsd || illumos || netbsd || openbsd

package flock

// othersHoldRangeLocks is false: the close cost that keeping avoids was
// measured on Linux; elsewhere every release closes its descriptor.
func othersHoldRangeLocks(int) bool { return false }
