package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status/claim"
)

// A Lease is an etcd lease that owns claims (package
// github.com/agentstate/core/status/claim): a claim that records
// [Lease.Owner] lives as long as the lease. The lease is renewed while the
// process runs and its client reaches etcd; when the process dies, or is cut
// off from etcd for longer than the lease's TTL, the lease expires, and
// [LeaseCheck] calls its owner dead, on any host, so that claim.Reap
// releases its claims.
//
// Unlike a process on one host, such an owner can be dead while its process
// runs: a process cut off from etcd must stop using its claims when its
// lease ends ([Lease.Done]).
type Lease struct {
	cli   *clientv3.Client
	id    clientv3.LeaseID
	owner claim.Owner
	stop  context.CancelFunc
	done  chan struct{}
	once  sync.Once
}

// NewLease grants a lease with the given TTL (rounded up to whole seconds,
// at least 1s; etcd may raise it to its minimum) and renews it until
// [Lease.Revoke], until the client is closed, or until etcd no longer has
// the lease. Its renewal runs on a goroutine of the client's that ends
// then. ctx bounds the grant only.
func NewLease(ctx context.Context, cli *clientv3.Client, ttl time.Duration) (*Lease, error) {
	if ctx == nil {
		return nil, fmt.Errorf("etcdstore: new lease: %w: context", errNilArg)
	}
	if cli == nil {
		return nil, fmt.Errorf("etcdstore: new lease: %w", errNilClient)
	}
	secs := max(int64((ttl+time.Second-1)/time.Second), 1)
	g, err := cli.Grant(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: new lease: %w", err)
	}
	// The renewal outlives ctx, which bounds the grant only.
	kctx, stop := context.WithCancel(context.Background())
	renewals, err := cli.KeepAlive(kctx, g.ID)
	if err != nil {
		stop()
		cli.Revoke(ctx, g.ID) // best effort: unrenewed, it expires anyway
		return nil, fmt.Errorf("etcdstore: new lease: %w", err)
	}
	owner, err := claim.Self()
	if err != nil {
		// The process's identity only informs people; the lease decides.
		owner = claim.Owner{}
	}
	owner.Lease = strconv.FormatUint(uint64(g.ID), 16)
	owner.Cluster = strconv.FormatUint(g.ResponseHeader.GetClusterId(), 16)
	l := &Lease{cli: cli, id: g.ID, owner: owner, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for range renewals { // closed when the renewal ends, for any reason
		}
	}()
	return l, nil
}

// Owner is the owner to record in the lease's claims: the lease and its
// cluster, and, for people, the process that holds it.
func (l *Lease) Owner() claim.Owner { return l.owner }

// ID is the lease's etcd ID.
func (l *Lease) ID() clientv3.LeaseID { return l.id }

// Done is closed when the lease is no longer renewed: after Revoke, after
// the client was closed, or when etcd no longer has the lease (it expired
// while the process was cut off, or another client revoked it). From then
// on, or at the latest one TTL later, its claims are dead.
func (l *Lease) Done() <-chan struct{} { return l.done }

// Revoke ends the lease at once, so that its claims are dead now rather
// than one TTL after the process ends: for a process that stops without
// releasing its claims. The renewal stops even if the revocation fails
// (then the lease expires after its TTL).
func (l *Lease) Revoke(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("etcdstore: revoke lease %x: %w: context", int64(l.id), errNilArg)
	}
	l.once.Do(l.stop)
	<-l.done
	if _, err := l.cli.Revoke(ctx, l.id); err != nil {
		return fmt.Errorf("etcdstore: revoke lease %x: %w", int64(l.id), err)
	}
	return nil
}

// LeaseCheck returns a claim.Check that asks etcd, through cli, about
// owners that are leases, and judges the others with claim.Local. A lease
// owner is dead once etcd no longer has its lease (expired and removed, or
// revoked; a lease ID is never granted twice by etcd), alive while it
// has, and unknown if it names another cluster than cli's or cannot be
// parsed. An error talking to etcd is returned as is: claim.Reap then
// releases nothing.
func LeaseCheck(cli *clientv3.Client) claim.Check {
	return func(ctx context.Context, o claim.Owner) (claim.Liveness, error) {
		if o.Lease == "" {
			return claim.Local(ctx, o)
		}
		if ctx == nil {
			return claim.Unknown, fmt.Errorf("etcdstore: lease check: %w: context", errNilArg)
		}
		if cli == nil {
			return claim.Unknown, fmt.Errorf("etcdstore: lease check: %w", errNilClient)
		}
		id, err := strconv.ParseUint(o.Lease, 16, 64)
		if err != nil || id == 0 {
			return claim.Unknown, nil
		}
		resp, err := cli.TimeToLive(ctx, clientv3.LeaseID(id))
		if err != nil {
			if cli.Ctx().Err() != nil {
				err = errors.Join(ErrClosed, err)
			}
			return claim.Unknown, fmt.Errorf("etcdstore: lease check %s: %w", o.Lease, err)
		}
		if o.Cluster != "" && o.Cluster != strconv.FormatUint(resp.ResponseHeader.GetClusterId(), 16) {
			return claim.Unknown, nil
		}
		// etcd answers -1 for a lease it does not have. A lease past its
		// expiry that the leader has not revoked yet still answers 0 or
		// more: alive, until it is gone.
		if resp.TTL == -1 {
			return claim.Dead, nil
		}
		return claim.Alive, nil
	}
}
