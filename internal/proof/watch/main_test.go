// Package watch_test checks status.List and status.WatchDir against a
// model of the files under a root, with rapid: after every step of a
// random sequence of writes, corruptions, removals and directory moves,
// List equals the model at once and the watch converges to it, having
// yielded only committed versions and never one twice in a row.
package watch_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
