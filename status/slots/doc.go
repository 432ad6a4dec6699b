// Package slots admits work under caps with a registry of owned slots:
// a dispatcher reserves a slot before it starts an agent, the agent
// becomes the slot's owner, and the slot ends when the agent releases it,
// when a failed start aborts it, or when a reaper finds its owner dead.
// Each operation is one transaction (status.MutateAll) over the registry
// and the slot's other documents, such as its task's status.json, with the
// caller's change to them:
//
//	reg := status.NewStore[slots.Registry]("fleet/AGENT_REGISTRY.json")
//	task := status.NewStore[status.Status]("fleet/acme/api/fix-42/status.json")
//
//	// the dispatcher
//	s, err := slots.Reserve(ctx, reg, slots.Request{Key: "acme/api/fix-42", Owner: me,
//		Resources: map[string]string{"prompt": promptFile}},
//		slots.Transition(task, status.Running, status.Queued))
//	// ... start the agent with s.ID; if that fails:
//	_, err = slots.Abort(ctx, reg, s.ID, slots.Transition(task, status.Queued, status.Running))
//	os.Remove(promptFile) // its own file; the Resources the slot returns are for reapers (Security)
//
//	// the agent, before it works, and when it is done
//	_, err = slots.Adopt(ctx, reg, id, me)
//	_, err = slots.Release(ctx, reg, id, slots.Transition(task, status.Completed, status.Running))
//
//	// anyone, at start-up, on a timer, before admitting work
//	res, err := slots.Reap(ctx, reg, failTask)
//
// The registry is one JSON document that jq reads, with the members that
// dispatchers already use (agents, active_count, total_spawned,
// max_concurrent) and the rest of the policy (max_total, max_depth).
// docs/PROTOCOL.md (Registries of slots) gives its format and each
// operation's rules, for programs in other languages: the Python package in
// the repository's python directory, and corestate slot for shell scripts.
// The same operations work on etcd (status.NewStore with etcdstore.With),
// with an etcdstore.Lease as the owner and WithCheck(etcdstore.LeaseCheck)
// to judge it.
//
// # Guarantees
//
//   - Reserve admits a slot only under the policy: fewer active slots than
//     max_concurrent (0 admits nothing), fewer admitted than max_total (0:
//     no cap), a parent that holds an active slot, a depth of at most
//     max_depth (0: roots only), and a key no active slot holds. A refusal
//     is an error matching one of ErrFull, ErrTotal, ErrNoParent,
//     ErrTooDeep, or ErrExists with the slot that holds the key, so that a
//     retried spawn gets its slot back; a refusal writes nothing.
//   - Each operation is all or nothing with the documents its Edits change,
//     across goroutines and processes, on files and on etcd, also when its
//     process is killed half-way (the status package doc's Transactions).
//   - active_count and total_spawned are written from the slots by every
//     operation: an operation that finds them edited by hand writes them
//     right, and no admission reads active_count. So the counts a reader
//     sees are those of the slots in the same version of the document.
//   - A slot's parent stays active while the slot is: Release and Abort of
//     a parent refuse with ErrHasChildren, and Reap keeps a dead parent
//     until its children are gone.
//   - Reap releases each slot whose owner is dead exactly once, however
//     many reapers run, in one transaction with its documents (by the
//     rules of claim.Reap, whose Reaping section gives the details); the
//     released slots come back with their Resources.
//
// # Ownership
//
// A slot's owner is the process whose death frees the slot. The reserver
// (the dispatcher) records itself, because it counts the slot before the
// agent exists, or the cap would overshoot; the working process (the
// agent) then becomes the owner, because a slot owned by a dispatcher that
// lives on never frees when its agent alone is killed. The owner changes
// once, from the reserver to the worker, by Adopt (the worker records
// itself) or HandOver (the reserver records claim.Of of the worker's pid,
// taken before it waits for the worker, so that the pid cannot be reused
// meanwhile: an exited child not yet waited for is a zombie, which
// claim.Local calls dead). After that the slot's owner is the worker until
// the slot ends: a second Adopt or HandOver with another owner fails with
// ErrAdopted, and so does Abort, so a dispatcher's error path never frees
// the slot of a worker that runs. A worker adopts before it works.
// Then the death of either process at any moment leaves the slot to a
// live owner or to a reaper, never to the wrong process:
//
//   - Before the worker starts, the owner is the reserver. If it dies,
//     Reap releases the slot and returns its Resources; no worker exists.
//   - Between the worker's start and the change of owner, the owner is the
//     reserver. If the worker dies, its live reserver learns it when it
//     waits for it and calls Abort or Release (or HandOver records the dead
//     child, which Reap releases). If the reserver dies, Reap may release
//     the slot; the worker's Adopt then fails with ErrReleased and the
//     worker stops without working, so it never works without a slot.
//   - After the change, the owner is the worker. Its death frees the slot at
//     the next Reap; the reserver's death changes nothing.
//
// The residual window: a worker that cannot adopt (a foreign program),
// given its slot by HandOver alone, runs without a slot if its reserver
// dies after starting it and before HandOver commits and a reaper runs
// then; the cap may be exceeded by one while that worker runs. Starting
// such a worker through corestate closes it: corestate slot adopt REG ID --
// CMD ARGS adopts the slot with corestate's own pid and then replaces
// itself with CMD by exec(2), which keeps the pid and the start time, so the
// owner recorded is the process that works, from before it works.
//
// On etcd the owners are leases (etcdstore.NewLease): a lease ends one TTL
// after its process dies or is cut off from etcd, on any host. A worker cut
// off must stop when its lease's Done channel is closed: its slot may be
// reaped from then on.
//
// # Security
//
// This package never removes a file, directory or session that a registry
// names: Abort, Release and Reap return the slot's Resources to the caller.
// A member of a shared workspace who can write the registry could otherwise
// make a privileged reaper delete anything by writing its path into a slot.
// The caller decides what it trusts (paths under its own directories, names
// it generated) before it removes anything.
//
// For the same reason the package opens no document by a name read from the
// registry. Reserve records the paths of its Edits' documents relative to
// the registry's directory and refuses documents outside it; a reaper opens
// a slot's documents itself, through the function it gives Reap, for which
// DocPath resolves a recorded name only if it stays inside the registry's
// directory, lexically and with the symbolic links of its directories
// followed: a link planted there that leads out is refused. Reap builds each
// dead slot's Edit twice, before the locks and under them, so a directory
// swapped for such a link before the documents are locked fails the pass.
// Not guaranteed: a directory swapped for a link and back at the right
// moments of a commit, which only a privileged reaper of a registry that
// others can write meets; such a reaper builds documents from names it
// trusts (its own list of tasks) rather than from the registry. A registry
// that others can fill makes a reaper work in proportion to its size (at
// most status.WithMaxSize), never more, and Reap and List stop when ctx is
// done.
//
// # Not guaranteed
//
//   - The cap counts slots, not processes: a worker that goes on after its
//     slot ended (it ignored ErrReleased, or its lease ended) is not counted.
//   - Reap does not run by itself, and starts no goroutine: call it where
//     slots may be orphaned. Owners on other hosts are unknown to
//     claim.Local and kept (Reaped.Unknown); see the claim package doc.
//   - Programs that write the registry without these operations (an older
//     dispatcher's active_count += 1) are not counted: their count is
//     overwritten from the slots. Move every admitter over at once.
//   - A stopped (SIGSTOP) or hung worker is alive and keeps its slot.
package slots
