package slots_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests with processes killed at random, with their controls, are in
// internal/proof/slots; the same operations on etcd are tested in
// status/etcdstore.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
