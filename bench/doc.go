// Command peerbench measures status.Mutate next to the durable stores a
// user would otherwise pick, on the same machine in the same run, and
// prints a markdown report with the goals as pass/fail.
//
// Every scenario is one load shape (see scenarios); in each round every
// system runs it for the same window, in a rotated order, so that drift of
// the shared disk hits all systems alike; ratios are taken within a round
// and the report gives their median. After each cell the stored records
// are read back: their counts must equal the acknowledged calls.
//
// Usage (from the repository root: make bench-peers):
//
//	go run . [-rounds 5] [-window 1.5s] [-quick] [-only a,b] [-systems bbolt-batch] [-o report.md]
//
// It is a nested module so that the peers (modernc.org/sqlite,
// go.etcd.io/bbolt) never become dependencies of the root module. The
// module also holds the peer comparisons of packages fs (bench/fs:
// natefinch/atomic, renameio) and config (bench/config: koanf), which run
// with make bench and make test.
package main
