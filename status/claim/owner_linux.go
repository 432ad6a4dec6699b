package claim

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// initPIDNS is the inode number of the initial pid namespace
// (PROC_PID_INIT_INO, fixed in the kernel since Linux 3.8): a process in it
// runs on the host itself, not in a container.
const initPIDNS = 0xEFFFFFFC

// errForeignProc: /proc belongs to another pid namespace than the caller's,
// so the pids it shows are not the caller's pids.
var errForeignProc = errors.New("/proc is not mounted for this process's pid namespace")

// A view is what a process sees of its host: the owners it records and
// the owners it can judge are relative to it.
type view struct {
	host, machine, boot string
	pidns, timens       uint64
}

// selfView reads the caller's view.
func selfView() (view, error) {
	st, err := readStat("self")
	if err != nil {
		return view{}, err
	}
	if st.pid != os.Getpid() {
		return view{}, errForeignProc
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return view{}, err
	}
	v := view{host: hostname(), machine: machineID(), boot: string(bytes.TrimSpace(boot))}
	if v.boot == "" {
		return view{}, errors.New("empty boot id")
	}
	if v.pidns, err = nsInode("pid"); err != nil {
		return view{}, err
	}
	// Time namespaces exist since Linux 5.6; before, every process shares
	// the one clock and timens is 0.
	if v.timens, err = nsInode("time"); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return view{}, err
	}
	return v, nil
}

func of(pid int) (Owner, error) {
	v, err := selfView()
	if err != nil {
		return Owner{}, err
	}
	st, err := readStat(strconv.Itoa(pid))
	if err != nil {
		return Owner{}, err
	}
	return Owner{
		Host:    v.host,
		Machine: v.machine,
		Boot:    v.boot,
		PIDNS:   v.pidns,
		TimeNS:  v.timens,
		PID:     pid,
		Start:   st.start,
	}, nil
}

// local applies the rules of the package doc (Liveness), in their order.
func local(o Owner) Liveness {
	if o.Lease != "" || o.Boot == "" || o.PID <= 0 || o.Start == 0 || o.PIDNS == 0 {
		return Unknown
	}
	me, err := selfView()
	if err != nil {
		return Unknown
	}
	if o.Boot != me.boot {
		// Boot ids are random per boot: another one is another machine,
		// or this machine before it restarted. Only a host process of a
		// machine that names itself as this one does is known to be gone.
		if o.PIDNS == initPIDNS && o.Machine != "" && o.Machine == me.machine && o.Host == me.host {
			return Dead
		}
		return Unknown
	}
	if o.PIDNS != me.pidns || o.TimeNS != me.timens {
		// The pid means another process here, or the start time reads
		// differently: nothing can be compared.
		return Unknown
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(o.PID) + "/stat")
	if err != nil {
		// A /proc mounted with hidepid=2 hides other users' processes as
		// if they did not exist; kill(pid, 0) sees them (EPERM).
		if (errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ESRCH)) &&
			errors.Is(syscall.Kill(o.PID, 0), syscall.ESRCH) {
			return Dead
		}
		return Unknown
	}
	st, err := parseStat(b)
	if err != nil || st.pid != o.PID {
		return Unknown
	}
	switch {
	case st.start != o.Start:
		return Dead // the pid now names a later process
	case (st.state == 'Z' || st.state == 'X') && st.threads <= 1:
		return Dead // exited; only its parent's wait is missing
	}
	// A zombie with threads left is a process whose first thread ended
	// while the others run.
	return Alive
}

// procStat is what the package needs of /proc/PID/stat.
type procStat struct {
	pid     int
	state   byte
	threads int
	start   uint64
}

func readStat(pid string) (procStat, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses /proc/PID/stat: "pid (comm) state ppid ...". comm may
// hold spaces and parentheses, so the fields are counted after the last
// ')': state is field 3, num_threads field 20, starttime field 22.
func parseStat(b []byte) (procStat, error) {
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("malformed /proc stat %.40q", s)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat %.40q", s)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(s[:open]))
	threads, err2 := strconv.Atoi(f[20-3])
	start, err3 := strconv.ParseUint(f[22-3], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat: %w", err)
	}
	return procStat{pid: pid, state: f[0][0], threads: threads, start: start}, nil
}

// nsInode returns the inode number of the caller's namespace of the kind
// ("pid", "time"): /proc/self/ns/pid reads "pid:[4026531836]".
func nsInode(kind string) (uint64, error) {
	link, err := os.Readlink("/proc/self/ns/" + kind)
	if err != nil {
		return 0, err
	}
	digits, ok := strings.CutPrefix(link, kind+":[")
	if digits, ok = strings.CutSuffix(digits, "]"); !ok {
		return 0, fmt.Errorf("namespace link %q", link)
	}
	return strconv.ParseUint(digits, 10, 64)
}

// machineID returns systemd's machine ID (dbus's where systemd's is
// missing), or "" if neither holds 32 lowercase hex digits (absent, empty,
// "uninitialized").
func machineID() string {
	for _, name := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		if id := string(bytes.TrimSpace(b)); isMachineID(id) {
			return id
		}
	}
	return ""
}

func isMachineID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
