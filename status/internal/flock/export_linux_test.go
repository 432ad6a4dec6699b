package flock

// For the tests of package flock_test, which use package status.
var (
	TestNoRecheck  = &testNoRecheck
	TestKeepAlways = &testKeepAlways
	CloseKept      = closeKept
)
