//go:build !linux

package slots_test

import (
	"testing"

	"github.com/agentstate/core/status/claim"
)

// processOwner is nil where claim.Local cannot tell a process's end.
var processOwner func(t *testing.T) (claim.Owner, func())
