//go:build !crashhooks

package flock

// hooksBuilt reports whether Seams take effect: only in builds with the
// crashhooks tag, which make test sets. Without it they compile to nothing.
const hooksBuilt = false
