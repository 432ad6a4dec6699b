// Package racetest holds no library code: its tests are the cross-package
// race suite of the module. They replay an agent-service workload that
// loses updates without a lock (a spawner, a completion handler, a status
// tool that rewrites dead workspaces, a queue-drain loop, kill and resume
// paths, shutdown) on one workspace root, in several goroutines and several
// OS processes at once, and a Python agent that follows the locking
// protocol of package status, and check that no acknowledged update is
// lost, no reader sees a torn document, and no workspace state goes
// backwards.
//
// The same workload runs against a bare read-modify-write implementation
// (read, decode, change, write back, no lock) as a control: those tests
// assert that the suite DOES see lost updates, torn reads or regressions
// there, so a green run of the real suite means something.
//
// docs/RFC.md (section Race suite) says what the suite runs and asserts;
// docs/BENCHMARKS.md what the controls lost.
package racetest
