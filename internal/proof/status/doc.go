// Package status holds no library code: its tests prove the transactions
// of package status (status.MutateAll, status.LoadAll) with peer tools,
// black-box through the public API and the documented protocol:
//
//   - a rapid state machine of transactions, Mutate calls, reads and
//     commits that a process left half-way (written file by file as the
//     protocol describes), against a model;
//   - porcupine linearizability of histories over two documents, with
//     transactions, Mutate calls and LoadAll from several processes, and a
//     CONTROL (two Mutate calls in place of each transaction) that the
//     checker must reject;
//   - deadlock freedom of transactions over overlapping sets in opposite
//     orders across processes, with hand-nested Mutate calls as the
//     CONTROL that deadlocks (bounded by a context);
//   - admission control: processes of goroutines and a Python agent
//     spawning and finishing tasks against a registry's max_concurrent,
//     watched by an observer that holds the registry's lock;
//   - the Python package (python/, import agentstate; the scripts in
//     testdata use it) against Go: the bytes it writes equal Go's for
//     random values and member names (CONTROL: json.dumps), each reads the
//     other's documents; its transactions in the two-document
//     linearizability history, 0 lost (CONTROL: two mutate calls); its
//     commit killed at every step and recovered by Go (CONTROL: two mutate
//     calls killed between them).
//
// The longest tests spend their time waiting, on disk syncs and on the
// processes they start, not computing: they run in parallel with each
// other (t.Parallel), and the package's run is shorter by their overlap.
package status
