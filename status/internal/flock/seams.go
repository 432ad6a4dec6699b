package flock

// Seams are the switches of the tests: each turns off one rule, so that a
// test's CONTROL can show the failure the rule prevents, or tells a test
// what a waiter does. They exist only in builds with the crashhooks tag
// (make test sets it): [TestSeams] returns nil in other builds, where
// every use compiles to nothing.
type Seams struct {
	TrustAnyOwner bool // take a lock file in a sticky directory whoever owns it
	KeepForever   bool // kept descriptors stay until taken or displaced (no time bound)

	try, sleep, rung   func() // called before every try of the lock, before every sleep, after a sleep the bell ended
	noBell, noTimeouts bool   // waiters poll; waiters sleep on the bell until it rings
	falseRings         int    // if > 0, replaces maxFalseRings
	noKeep, keepAlways bool   // every released descriptor is closed; or kept whatever the file carries
	shareKept          bool   // a kept descriptor is handed out without being taken from the list
	noRecheck          bool   // neither identity check of a kept descriptor or a lock file is made
	closeLock          func() // called for every close of a lock file's descriptor
	expired            func(closed int)
}
