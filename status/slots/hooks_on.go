//go:build crashhooks

package slots

var testSwitches seams

// testSeams returns the switches of the tests (see seams).
func testSeams() *seams { return &testSwitches }
