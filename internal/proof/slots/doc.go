// Package slots holds no library code: its tests prove package
// github.com/agentstate/core/status/slots against real processes, with
// controls:
//
//   - a fleet of dispatcher processes, in Go, in shell with corestate
//     (testdata; its dispatcher starts agents through corestate slot adopt's
//     exec wrapper) and in Python (testdata/fleet_member.py, on the
//     repository's python package), reserves slots, starts agent processes
//     of any of these languages and hands the slots over to them; agents adopt their slot,
//     and either release it or keep it; the test kills agents and dispatchers with
//     SIGKILL at random, and dispatchers on purpose between Reserve and the
//     start of the agent and between the start and HandOver; it retries spawns
//     with the same key and makes some spawns fail after Reserve (Abort);
//     each of these three cases also runs once before the kills begin, with
//     room in the registry, so that no run misses one. A
//     checker reading the registry and every task under their locks
//     (status.LoadAll), all the time, never sees more active slots than
//     max_concurrent, two active slots with one key, a child without its
//     parent, counts that differ from the slots, or a task that runs without
//     a slot (or a slot whose task does not run). After a final Reap the
//     slots are exactly those of the agents alive, and total_spawned is the
//     number of tasks ever admitted. CONTROLS: the bare read-modify-write of
//     the registry (caught by the checker or the final check), and a fleet
//     without hand-over, whose reaper leaks the slot of an agent killed while
//     its dispatcher lives (caught by the final check). The controls run Go
//     members only, and Python's bare read-modify-write has a control of its
//     own: the shell members have no unsafe mode. Python dispatchers and
//     agents also run alone under kills;
//   - the Python package writes the registry byte for byte as this package
//     does, from a registry in odd forms (other programs' members of every
//     kind, spacing, time formats, wrong counts), operation by operation,
//     refuses alike and returns the same slots; each lists what the other
//     wrote, with the same liveness (testdata/slots_ops.py); Python and
//     corestate take turns on one registry: a retried spawn in either finds
//     the other's slot, and each adopts and releases the other's;
//   - a rapid state machine of reserve, adopt, hand over, release, abort,
//     owners' deaths and reap against a model of docs/PROTOCOL.md's rules:
//     each outcome and the registry after it (slots, owners, adoption,
//     depths, counts) are the model's;
//   - a second user who is a member of a shared workspace (setpriv) plants,
//     with flock(1) and jq, a dead slot whose document goes through a link
//     out of the workspace: a root reaper in each client refuses it and
//     leaves root's file alone. CONTROL: a reap through the path the name's
//     shape alone gives rewrites it.
//
// # Members of other languages
//
// A fleet member is a dispatcher program and an agent program (see
// fleetMember in fleet_linux_test.go); a test draws each dispatcher, and
// the agents each dispatcher starts, from the members, so that they mix on
// one registry. A member in another language follows this line protocol.
//
// A dispatcher gets the environment FLEET_REG (the registry's path),
// FLEET_MODE (handover; nohandover: the CONTROL, the dispatcher stays the
// owner and agents do not adopt; bare: the CONTROL, admission, release
// and reap by read, change, atomic write without the lock) and FLEET_AGENT
// (a JSON object {"argv": [...], "env": ["NAME=VALUE", ...]}: the agent
// program to start, with its environment added to the dispatcher's own). It
// inherits two pipes: fd 3, where its agents report (below), and fd 4, a
// barrier: every process holding it keeps the test waiting. It reads
// commands on stdin, one per line, and answers each with one line on
// stdout:
//
//	spawn TASK PARENT FLAGS   reserve a slot with key TASK (the task document is
//	                          TASK/status.json next to the registry) under PARENT
//	                          ("-": a root), owned by itself, with the resource
//	                          prompt=<a file it creates>, moving the task from
//	                          queued to running; if full, reap (failing tasks)
//	                          and try again, a few times; then start the agent
//	                          with the arguments SLOT-ID TASK-PATH PLAN, where
//	                          PLAN is short or long (from FLAGS), passing fds 3
//	                          and 4 on; then hand the slot over to the agent's
//	                          pid. FLAGS, comma-separated: short or long; fail
//	                          (start a program that does not exist, then abort:
//	                          the task moves to blocked, the prompt file is
//	                          removed); pause-before-start, pause-before-handover
//	                          (answer "paused", then wait to be killed).
//	stop                      close fd 4, answer "stopped", wait for the end of stdin
//
// Answers: "ok ID PID", "exists ID" (the key's slot), "refused full|total|
// noparent|toodeep", "conflict" (the task was not queued), "aborted ID
// PROMPT" (the prompt file, removed), "paused ID", "lost ID" (HandOver found
// the slot gone: the agent was killed), or "error MESSAGE", each one line.
// The agents get neither the dispatcher's stdin nor its stdout. The test
// tells a dispatcher's death by the process, not by the end of its stdout,
// and a new dispatcher gets the command again.
//
// An agent writes one line per event to fd 3 (each shorter than PIPE_BUF,
// written at once): "started ID PID START" (START: field 22 of
// /proc/PID/stat), then adopts its slot (FLEET_MODE handover) and writes
// "adopted ID", or "refused ID" and exits; with PLAN short it then releases
// (running to completed) and writes "released ID", or, if the slot has
// children, "long ID"; it closes fd 4 then; with PLAN long (or turned long)
// it then waits until it is killed. "error ID MESSAGE" fails the test.
package slots
