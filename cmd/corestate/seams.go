package main

// seams are the switches of the tests' controls: each turns off one check,
// so that a control can show what the check prevents. They exist only in
// builds with the crashhooks tag (make test sets it): testSeams returns nil
// in other builds, where every use compiles to nothing.
type seams struct {
	noTxCheck   bool // fsck takes every transaction file as one the next locker recovers (no txfile.Check)
	noLockCheck bool // fsck takes every lock file as trusted (no txfile.CheckLock)
	rootAsLink  bool // a link given as ROOT is walked as itself, not resolved
}
