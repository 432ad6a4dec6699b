//go:build !crashhooks

package slots

// testSeams returns nil: a build without the crashhooks tag has no
// switches (see seams).
func testSeams() *seams { return nil }
