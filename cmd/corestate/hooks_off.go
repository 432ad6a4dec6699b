//go:build !crashhooks

package main

// testSeams returns nil: a build without the crashhooks tag has no
// switches (see seams).
func testSeams() *seams { return nil }
