package journal

import (
	"errors"
	"fmt"
)

// Seams are the switches of the tests: each turns off one rule, so that a
// test's control can show the failure the rule prevents, stops a commit at
// a step no outside fault hits reliably, or tells a test what recovery
// opens. They exist only in builds with the crashhooks tag (make test sets
// it): [TestSeams] returns nil in other builds, where every use compiles
// to nothing.
type Seams struct {
	// Crash is called after each step of a commit ("marker 0", "temp 0",
	// ..., "prepared", "journal", "committed", "renamed 0", ...,
	// "installed", "forgotten", "unmarked 0", ...); when it returns true
	// the commit stops there as if its process had died, leaving
	// everything in place, and returns ErrCrashed.
	Crash func(step string) bool
	// Hook is told of each file or directory that recovery opens ("open")
	// or syncs ("sync"), and of the moment after its first look at the
	// other documents' markers, before it removes anything ("cleanup").
	Hook func(event, name string)

	TrustAnyOwner   bool // no owner check in sticky directories
	StrictOwner     bool // the owner of every transaction file must be the document's
	NoConflictCheck bool // install the new content whatever replaced the document
	NoLimits        bool // commit what recovery refuses (CheckLimits passes everything)
	ByPath          bool // recovery reaches files by path, not through the directory's descriptor, and takes any journal directory
}

// ErrCrashed is returned by a commit that Seams.Crash stopped.
var ErrCrashed = errors.New("commit abandoned at a simulated crash")

func hook(event, name string) {
	if s := TestSeams(); s != nil && s.Hook != nil {
		s.Hook(event, name)
	}
}

func crashAt(step string, i ...int) bool {
	s := TestSeams()
	if s == nil || s.Crash == nil {
		return false
	}
	for _, n := range i {
		step += fmt.Sprintf(" %d", n)
	}
	return s.Crash(step)
}
