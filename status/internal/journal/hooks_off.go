//go:build !crashhooks

package journal

// HooksBuilt reports whether Seams.Crash and Seams.Hook are called: only in
// builds with the crashhooks tag, which make test sets. Without it the
// calls compile to nothing.
const HooksBuilt = false
