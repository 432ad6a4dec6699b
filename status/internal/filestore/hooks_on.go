//go:build crashhooks

package filestore

var seams Seams

// TestSeams returns the switches of the tests (see [Seams]).
func TestSeams() *Seams { return &seams }
