package claim

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// An Owner names the holder of a claim: a process, identified so that it
// can be told from a later process that reuses its ID, or an etcd lease.
// Its JSON form is the format the package doc defines (see Owners); a
// claim stores it as a member of the document that holds the claim. The
// zero Owner names no one: its liveness is [Unknown].
type Owner struct {
	Host    string `json:"host,omitempty"`
	Machine string `json:"machine,omitempty"`
	Boot    string `json:"boot,omitempty"`
	PIDNS   uint64 `json:"pidns,omitempty"`
	TimeNS  uint64 `json:"timens,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Start   uint64 `json:"start,omitempty"`
	Lease   string `json:"lease,omitempty"`
	Cluster string `json:"cluster,omitempty"`
}

// String names the owner for people: "pid 4242 on build-7", or
// "etcd lease 694d8c5f2a1b3c4d".
func (o Owner) String() string {
	var parts []string
	if o.Lease != "" {
		parts = append(parts, "etcd lease "+o.Lease)
	}
	if o.PID != 0 {
		parts = append(parts, "pid "+strconv.Itoa(o.PID))
	}
	if o.Host != "" {
		parts = append(parts, "on "+o.Host)
	}
	if len(parts) == 0 {
		return "no owner"
	}
	return strings.Join(parts, " ")
}

// Liveness is what a [Check] can tell about an owner.
type Liveness int8

const (
	// Unknown: the owner cannot be judged from here (another host, another
	// pid namespace, an owner without a process identity). Its claims are
	// kept.
	Unknown Liveness = iota
	// Alive: the owner runs (or may still run: stopped, slow, or debugged
	// processes are alive). Its claims are kept.
	Alive
	// Dead: the owner has ended and cannot come back. Its claims can be
	// released.
	Dead
)

func (l Liveness) String() string {
	switch l {
	case Unknown:
		return "unknown"
	case Alive:
		return "alive"
	case Dead:
		return "dead"
	}
	return "Liveness(" + strconv.Itoa(int(l)) + ")"
}

// A Check decides whether an owner is alive. It must return [Dead] only for
// an owner that has ended for good, and [Unknown] for owners it cannot
// judge. [Local] is the check of processes on this host; etcdstore.LeaseCheck
// adds etcd leases. A policy for other hosts wraps one of them:
//
//	check := func(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
//		l, err := claim.Local(ctx, o)
//		if l == claim.Unknown && err == nil && retired[o.Host] {
//			return claim.Dead, nil // a host taken out of service
//		}
//		return l, err
//	}
type Check func(ctx context.Context, o Owner) (Liveness, error)

// Self returns the owner that names the calling process, to record in the
// claims it takes. On Linux it fails if /proc cannot be read or is not
// mounted for the caller's pid namespace; elsewhere it names the process by
// host and pid only, and [Local] calls such owners [Unknown].
func Self() (Owner, error) { return Of(os.Getpid()) }

// Of returns the owner that names the process pid on this host (numbered
// in the caller's pid namespace), for a claim taken on its behalf: a shell
// script's claim names the script, not the corestate process that writes
// it. On Linux it fails if the process does not exist or /proc cannot be
// read as Self needs it.
func Of(pid int) (Owner, error) {
	if pid <= 0 {
		return Owner{}, fmt.Errorf("claim: owner of pid %d: %w", pid, os.ErrInvalid)
	}
	o, err := of(pid)
	if err != nil {
		return Owner{}, fmt.Errorf("claim: owner of pid %d: %w", pid, err)
	}
	return o, nil
}

// Local decides the liveness of an owner from this host, by the rules of
// the package doc (see Liveness): [Dead] only for a process of this host
// that has ended (or of an earlier boot of this host), [Alive] for one that
// runs, [Unknown] otherwise. It never returns an error; its signature is a
// [Check]'s.
func Local(ctx context.Context, o Owner) (Liveness, error) {
	return local(o), nil
}

// hostname is the host name recorded in owners ("" if it cannot be read).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
