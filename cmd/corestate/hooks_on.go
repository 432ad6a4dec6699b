//go:build crashhooks

package main

var testSwitches seams

// testSeams returns the switches of the tests (see seams).
func testSeams() *seams { return &testSwitches }
