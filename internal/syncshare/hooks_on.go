//go:build crashhooks

package syncshare

var seams Seams

// TestSeams returns the switches of the tests (see [Seams]).
func TestSeams() *Seams { return &seams }
