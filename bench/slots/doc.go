// Package slots holds no library code: its benchmarks measure a reserve
// and a release of package github.com/agentstate/core/status/slots next
// to the same admission written by hand with status.MutateAll, and next to
// SQLite doing it in one transaction (a COUNT check and an insert), in the
// same run. docs/BENCHMARKS.md gives the commands and the figures.
package slots
