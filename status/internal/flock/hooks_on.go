//go:build crashhooks

package flock

var seams Seams

// TestSeams returns the switches of the tests (see [Seams]).
func TestSeams() *Seams { return &seams }
