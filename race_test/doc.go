// Package racetest holds no library code: its tests are the cross-package
// race suite of the module. They replay an agent-service workload that
// loses updates without a lock (a spawner, a completion handler, a status tool that rewrites
// dead workspaces, a queue-drain loop, kill and resume paths, shutdown) on
// one workspace root, in several goroutines and several OS processes at
// once, and check that no acknowledged update is lost, no reader sees a torn
// document, and no workspace state goes backwards.
//
// The same workload runs against a bare read-modify-write implementation
// (read, decode, change, write back, no lock) as a control: those tests
// assert that the suite DOES see lost updates, torn reads or regressions
// there, so a green run of the real suite means something.
//
// See docs/RFC.md (race suite section) for what the suite runs, asserts and measured.
package racetest
