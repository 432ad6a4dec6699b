// Package claim names the holder of a claim kept in a status document, and
// releases the claims whose holder has died.
//
// A claim is what a process holds by writing it into a document: an agent
// in a registry, a task marked running, a slot counted in active_count.
// [status.MutateAll] keeps such documents consistent with each other, not
// with processes: a holder killed by SIGKILL, the OOM killer or a power cut
// leaves its claims behind, and the counts that include them never come
// down. A claim that records its holder as an [Owner] can be released by
// [Reap] once the holder is dead, in one transaction with the documents that
// count it:
//
//	type Agent struct {
//		ID    string      `json:"id"`
//		Task  string      `json:"task"`
//		Owner claim.Owner `json:"owner"` // claim.Self(), when the agent is registered
//	}
//
//	res, err := claim.Reap(ctx, reg, func(r *Registry) []claim.Claim {
//		var cs []claim.Claim
//		for _, a := range r.Agents {
//			cs = append(cs, claim.Claim{ID: a.ID, Owner: a.Owner, Docs: []status.AnyStore{taskOf(a)}})
//		}
//		return cs
//	}, func(tx *status.Tx, c claim.Claim) error {
//		return unregister(tx, reg, c.ID, status.Failed) // what a finishing agent does
//	})
//
// docs/MIGRATION.md (section 10) shows a dispatcher's registry reaped this
// way as a tested example; corestate reap does it for JSON documents from a
// shell, and corestate owner prints a process's owner for a shell script's
// claims. Python programs record, judge and reap owners by the rules below
// with agentstate.claim, in the repository's python directory.
//
// # Owners
//
// An owner is stored as a JSON object, so that programs in other languages
// can record and judge owners too. Its members, each omitted when empty or
// zero:
//
//	host     string  the host name (gethostname(2))
//	machine  string  the machine ID: /etc/machine-id, else /var/lib/dbus/machine-id,
//	                 if it holds 32 lowercase hex digits (surrounding white space dropped)
//	boot     string  /proc/sys/kernel/random/boot_id, surrounding white space dropped
//	pidns    number  the inode number of the recorder's pid namespace: the digits of
//	                 readlink("/proc/self/ns/pid"), which reads "pid:[4026531836]"
//	timens   number  the same for /proc/self/ns/time (absent before Linux 5.6)
//	pid      number  the process ID, as numbered in pidns
//	start    number  the process's start time, field 22 (starttime) of /proc/PID/stat
//	                 as read by the recorder: clock ticks after boot
//	lease    string  an etcd lease ID in hexadecimal (etcdstore.NewLease)
//	cluster  string  the ID of that lease's etcd cluster, in hexadecimal
//
// For example:
//
//	{"host":"build-7","machine":"3d1219c7c4c5404aaa1f6d2a48adfda4",
//	 "boot":"db2e3dbb-713d-4bca-b91e-19b6e3f98c78","pidns":4026531836,
//	 "timens":4026531834,"pid":8927,"start":10084244}
//
// [Self] records the calling process, [Of] another one (a shell script's
// claim names the script, not the tool that writes it). The recorder is the
// process that reads /proc: pidns and timens are its own namespaces, in
// which pid is numbered and start is read. The fields of /proc/PID/stat from
// field 3 (the state) on are counted after the last ")" of the line, since
// field 2, the command name in parentheses, may hold spaces and parentheses.
// Field 1 of /proc/self/stat must equal getpid(), or /proc is not mounted for
// the recorder's pid namespace and no owner is recorded. Members this package
// does not know are ignored, so later versions may add some.
//
// On systems other than Linux, Self and Of record host and pid only, and
// [Local] calls every owner [Unknown]: no claim is released there by a
// process check (macOS offers a boot session UUID and process start times
// through sysctl, but nothing here reads them). Windows is the same.
//
// # Liveness
//
// [Local] judges an owner from the checking process's own view of its host,
// read as the owner's members are, with these rules in this order:
//
//  1. An owner with a lease is [Unknown]: its etcd cluster decides
//     (etcdstore.LeaseCheck), not the processes of this host.
//  2. An owner without boot, pidns, a pid above 0 and a start above 0 is
//     Unknown; so is every owner when the checker's /proc is not mounted for
//     its pid namespace.
//  3. Another boot: [Dead] if the owner's pidns is 4026531836 (the initial
//     pid namespace, fixed in the kernel: the owner ran on the host, not in
//     a container), its machine is not empty, and both its machine and its
//     host equal the checker's: the machine has restarted since, and every
//     process of the earlier boot has ended. Otherwise Unknown: another
//     machine, or a container, whose host name and machine ID may repeat on
//     other machines.
//  4. The same boot, but another pidns or timens: Unknown. The pid would
//     name another process here, or the start time would read differently.
//  5. /proc/PID/stat does not exist (ENOENT, ESRCH): Dead if kill(PID, 0)
//     fails with ESRCH; otherwise (EPERM: /proc mounted with hidepid hides
//     the process) Unknown. Any other error reading it: Unknown.
//  6. Its start time (field 22) differs from start: Dead. The pid was
//     reused by a later process; a process's start time never changes.
//  7. Its state (field 3) is Z or X and its number of threads (field 20)
//     is at most 1: Dead. The process has exited and only its parent's
//     wait is missing. (A Z with more threads is a process whose first
//     thread ended while others run: alive.)
//  8. Otherwise [Alive]. A stopped (SIGSTOP), traced or merely slow process
//     is alive: nothing here guesses from time.
//
// So Local calls an owner dead only when this kernel shows that its process
// is gone, or when the owner's machine has restarted. It relies on two
// facts the system must keep: boot IDs are random per boot, and a machine
// ID and host name pair names one machine (systemd requires machine IDs to
// be unique: regenerate /etc/machine-id in cloned images). An owner
// recorded in a container is judged only by checkers in the same pid and
// time namespaces on the same boot: a restarted container, or one on
// another node, sees Unknown. A process restored by CRIU is a new owner.
//
// Owners on other hosts that share a file system (NFS and the like) are
// Unknown to Local: a host cannot see another host's processes. A caller
// that knows more supplies a [Check] of its own (a host known to be gone;
// corestate reap --dead-host), and fleets that span hosts use etcd, where an
// owner is a lease and its cluster decides (status/etcdstore: NewLease,
// LeaseCheck). Note that the status package's file locks are not supported
// on network file systems in the first place.
//
// # Reaping
//
// [Reap] reads a document without a lock, lists its claims and decides
// their owners' liveness; if some owners are dead, it runs one
// [status.MutateAll] over the document and the claims' Docs, in which it
// lists the claims again, decides again under the locks, and releases each
// claim whose owner is still dead.
//
//   - Exactly once: a release must remove the claim from the document
//     (Reap fails the transaction if the claims function still lists it),
//     and every release happens under the locks of the documents it
//     changes, so when several reapers run at once, in goroutines or
//     processes, each claim is released by one of them; the others find it
//     gone.
//   - All or nothing: the claims released by one Reap and every change of
//     their documents (counts, task states) are one transaction, committed
//     together or not at all, also when the reaper is killed half-way (see
//     Transactions in the status package doc).
//   - A claim is released only if the [Check] calls its owner Dead, twice:
//     once without a lock and once under the locks. Local never calls a
//     live process dead (see Liveness); a check of your own must keep that
//     promise too.
//   - Claims of Unknown owners are kept, and listed in [Result.Unknown].
//
// Not guaranteed:
//
//   - Reap does not run by itself: call it where claims may be orphaned (at
//     start-up, before admitting work at a cap, on a timer, when an owner's
//     etcd lease ends). It starts no goroutine.
//   - The owner is the process recorded. A claim that another process goes
//     on using after its recorder ends (a child that outlives its parent)
//     is released with the recorder: record the process that works.
//   - An owner that is an etcd lease is dead once its lease has expired,
//     also if its process still runs but was cut off from etcd for longer
//     than the lease's TTL; such a process must stop using its claims when
//     its lease ends (etcdstore.Lease.Done).
//   - Each Reap releases the claims of one document (with their Docs) in
//     one transaction; claims kept in several documents need a Reap each.
package claim
