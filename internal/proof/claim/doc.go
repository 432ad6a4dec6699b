// Package claim holds no library code: its tests prove package
// github.com/agentstate/core/status/claim against real processes, with
// controls:
//
//   - owners recorded by Self and Of match what the system reports (cat,
//     ps, readlink of /proc), and Local applies each rule of the package
//     doc; stopped processes are alive, exited ones dead before their
//     parent waits, a process whose first thread ended alive;
//   - claims of owners killed with SIGKILL are released and the counts are
//     exact again; a reaper killed half-way changes nothing (CONTROL: two
//     Mutate calls);
//   - reused pids: a dead owner whose pid a live process now has is
//     released (CONTROL: pid-only liveness keeps it); live owners in
//     another pid namespace whose pids look reused or free here are kept
//     (CONTROLS: liveness without the namespace, pid-only liveness);
//   - reapers at once, in goroutines and processes, release each claim
//     once (CONTROL: deciding before the transaction); a claim taken again
//     between a reaper's read and its transaction is kept; a stopped owner
//     is kept (CONTROL: heartbeat timeouts);
//   - the Python package (python/, agentstate.claim; testdata/claims.py)
//     records the owners Go records and judges every owner alike
//     (CONTROL: a pid-only judge disagrees); Go reaps killed Python agents'
//     claims, and Python and Go reapers at once release killed Go agents'
//     claims once.
package claim
