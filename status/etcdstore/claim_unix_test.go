//go:build unix

package etcdstore

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
)

// The claims tests' dispatcher, kept in etcd: a registry of agents whose
// active_count counts them, and a task document per agent.

type claimRegistry struct {
	Agents      []claimAgent `json:"agents"`
	ActiveCount int          `json:"active_count"`
}

type claimAgent struct {
	ID    string      `json:"id"`
	Owner claim.Owner `json:"owner"`
}

type claimFleet struct {
	dir string
	opt status.Option
	reg *status.Store[claimRegistry]
}

func openClaimFleet(cli *clientv3.Client, dir string) *claimFleet {
	opt := With(cli)
	return &claimFleet{dir: dir, opt: opt, reg: status.NewStore[claimRegistry](filepath.Join(dir, "registry.json"), opt)}
}

func (f *claimFleet) task(id string) *status.Store[status.Status] {
	return status.NewStore[status.Status](filepath.Join(f.dir, id, "status.json"), f.opt)
}

func (f *claimFleet) register(ctx context.Context, id string, o claim.Owner) error {
	_, _, err := status.MutateAll2(ctx, f.reg, f.task(id), func(r *claimRegistry, t *status.Status) error {
		r.Agents = append(r.Agents, claimAgent{ID: id, Owner: o})
		r.ActiveCount++
		return t.Transition(status.Running, "")
	})
	return err
}

func (f *claimFleet) unregister(tx *status.Tx, id string, to status.State) error {
	r, err := f.reg.In(tx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(r.Agents, func(a claimAgent) bool { return a.ID == id })
	if i < 0 {
		return fmt.Errorf("agent %s is not registered", id)
	}
	r.Agents = slices.Delete(r.Agents, i, i+1)
	r.ActiveCount--
	t, err := f.task(id).In(tx)
	if err != nil {
		return err
	}
	return t.Transition(to, status.Running)
}

func (f *claimFleet) reap(ctx context.Context, cli *clientv3.Client) (claim.Result, error) {
	return claim.Reap(ctx, f.reg, func(r *claimRegistry) []claim.Claim {
		var cs []claim.Claim
		for _, a := range r.Agents {
			cs = append(cs, claim.Claim{ID: a.ID, Owner: a.Owner, Docs: []status.AnyStore{f.task(a.ID)}})
		}
		return cs
	}, func(tx *status.Tx, c claim.Claim) error {
		return f.unregister(tx, c.ID, status.Failed)
	}, claim.WithCheck(LeaseCheck(cli)))
}

// check reads the fleet under its locks: active_count must be the number
// of agents and of running tasks.
func (f *claimFleet) check(t *testing.T, ids []string) claimRegistry {
	t.Helper()
	docs := []status.AnyStore{f.reg}
	for _, id := range ids {
		docs = append(docs, f.task(id))
	}
	tx, err := status.LoadAll(testCtx(t), docs...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.reg.In(tx)
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, id := range ids {
		s, err := f.task(id).In(tx)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == status.Running {
			running++
		}
	}
	if r.ActiveCount != len(r.Agents) || r.ActiveCount != running {
		t.Errorf("active_count %d, %d agents, %d tasks running", r.ActiveCount, len(r.Agents), running)
	}
	return *r
}

// TestLeaseClaimsEndWithClient: two client processes register agents in
// etcd, owned by their leases (TTL 2s); one is killed with SIGKILL. Once its
// lease has expired, Reap with LeaseCheck releases exactly its claims and
// the count is exact again; the survivor's claims are kept, and it finishes
// them itself.
//
// CONTROL: the killed client also took one claim owned by its process
// instead of its lease, as a host that is not the reaper's records it.
// Nothing on the reaper's host can tell that process is dead, so that claim
// is never released.
func TestLeaseClaimsEndWithClient(t *testing.T) {
	endpoint := sharedServer(t).Endpoint()
	cli := newClient(t, endpoint)
	dir := t.TempDir()
	f := openClaimFleet(cli, dir)
	owners := map[string]*child{}
	leases := map[string]claim.Owner{}
	for _, name := range []string{"dead", "live"} {
		c := startClaimChild(t, endpoint, dir, name)
		owners[name] = c
		var o claim.Owner
		if err := json.Unmarshal([]byte(c.line()), &o); err != nil {
			t.Fatal(err)
		}
		leases[name] = o
		if line := c.line(); line != "ready" {
			t.Fatalf("client %s said %q", name, line)
		}
	}
	all := []string{"dead-0", "dead-1", "dead-2", "dead-host", "live-0", "live-1", "live-2", "live-host"}
	if r := f.check(t, all); r.ActiveCount != 8 {
		t.Fatalf("active_count %d; want 8", r.ActiveCount)
	}

	// Wait for the killed client's lease to end: a key attached to it is
	// deleted then.
	var id uint64
	fmt.Sscanf(leases["dead"].Lease, "%x", &id)
	sentinel := "/claim-test/sentinel/" + leases["dead"].Lease
	if _, err := cli.Put(testCtx(t), sentinel, "", clientv3.WithLease(clientv3.LeaseID(id))); err != nil {
		t.Fatal(err)
	}
	gone := deleted(t, cli, sentinel)
	if res, err := f.reap(testCtx(t), cli); err != nil || len(res.Released) != 0 {
		t.Fatalf("reap while both clients run: released %v, %v", res.Released, err)
	}
	owners["dead"].kill()
	if rev := <-gone; rev == 0 {
		t.Fatal("the killed client's lease did not end")
	}

	res, err := f.reap(testCtx(t), cli)
	if err != nil {
		t.Fatal(err)
	}
	var released, unknown []string
	for _, c := range res.Released {
		released = append(released, c.ID)
	}
	for _, c := range res.Unknown {
		unknown = append(unknown, c.ID)
	}
	if want := []string{"dead-0", "dead-1", "dead-2"}; !slices.Equal(released, want) {
		t.Errorf("released %v; want %v", released, want)
	}
	if want := []string{"dead-host", "live-host"}; !slices.Equal(unknown, want) {
		t.Errorf("unknown %v; want %v", unknown, want)
	}
	r := f.check(t, all)
	if r.ActiveCount != 5 {
		t.Errorf("active_count %d after the reap; want 5", r.ActiveCount)
	}
	if !slices.ContainsFunc(r.Agents, func(a claimAgent) bool { return a.ID == "dead-host" }) {
		t.Error("CONTROL: the claim owned by a process of another host was released")
	} else {
		t.Log("CONTROL: the killed client's claim owned by its process on another host stays registered")
	}

	c := owners["live"]
	c.send("finish")
	if line := c.line(); line != "finished" {
		t.Fatalf("live client said %q", line)
	}
	if r := f.check(t, all); r.ActiveCount != 2 {
		t.Errorf("active_count %d after the live client finished; want 2 (the claims owned by processes of another host)", r.ActiveCount)
	}
}

// TestLease: a lease's owner is alive while it is renewed, also past its
// TTL; Revoke ends it at once (Done is closed, LeaseCheck says dead); a
// lease revoked by another client closes Done; an owner of another
// cluster, or a lease that cannot be parsed, is unknown.
func TestLease(t *testing.T) {
	ctx := testCtx(t)
	cli := newClient(t, sharedServer(t).Endpoint())
	check := LeaseCheck(cli)
	liveness := func(o claim.Owner) claim.Liveness {
		t.Helper()
		l, err := check(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	l, err := NewLease(ctx, cli, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	o := l.Owner()
	if me, err := claim.Self(); err == nil && (o.PID != me.PID || o.Start != me.Start) {
		t.Errorf("owner %+v does not name this process", o)
	}
	if got := liveness(o); got != claim.Alive {
		t.Errorf("a renewed lease is %v", got)
	}
	// Renewed past its TTL: still there.
	if _, err := cli.KeepAliveOnce(ctx, l.ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
		t.Fatal("Done closed while renewed")
	case <-time.After(3 * time.Second):
	}
	if got := liveness(o); got != claim.Alive {
		t.Errorf("a lease renewed past its TTL is %v", got)
	}
	other := o
	other.Cluster = "1"
	if got := liveness(other); got != claim.Unknown {
		t.Errorf("a lease of another cluster is %v", got)
	}
	bad := o
	bad.Lease = "not hex"
	if got := liveness(bad); got != claim.Unknown {
		t.Errorf("an unparsable lease is %v", got)
	}
	if err := l.Revoke(ctx); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if got := liveness(o); got != claim.Dead {
		t.Errorf("a revoked lease is %v", got)
	}

	// Revoked by someone else: the renewal ends.
	l2, err := NewLease(ctx, cli, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t, sharedServer(t).Endpoint()).Revoke(ctx, l2.ID()); err != nil {
		t.Fatal(err)
	}
	<-l2.Done()
	if got := liveness(l2.Owner()); got != claim.Dead {
		t.Errorf("a lease revoked by another client is %v", got)
	}
	if err := l2.Revoke(ctx); err == nil {
		t.Error("revoking a lease that is gone succeeded")
	}

	// A process owner without a lease goes to claim.Local.
	if me, err := claim.Self(); err == nil {
		if got := liveness(me); got != claim.Alive {
			t.Errorf("this process is %v", got)
		}
	}
}

// startClaimChild starts a client process (TestClaimHelperProcess) that registers
// agents NAME-0..2 owned by its lease, and NAME-host owned by its process
// as seen from another host. It prints its lease owner, then "ready"; on
// "finish" it finishes its lease's agents and prints "finished".
func startClaimChild(t *testing.T, endpoint, dir, name string) *child {
	t.Helper()
	return startChild(t, "TestClaimHelperProcess",
		"ETCDSTORE_HELPER=claim", "ETCDSTORE_ENDPOINT="+endpoint, "ETCDSTORE_PATH="+dir, "ETCDSTORE_NAME="+name)
}

// TestClaimHelperProcess is the child side of TestLeaseClaimsEndWithClient.
// Run normally, it does nothing.
func TestClaimHelperProcess(t *testing.T) {
	if os.Getenv("ETCDSTORE_HELPER") != "claim" {
		return
	}
	if err := helperClaim(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func helperClaim() error {
	cli, err := dial(os.Getenv("ETCDSTORE_ENDPOINT"))
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := NewLease(ctx, cli, 2*time.Second)
	if err != nil {
		return err
	}
	f := openClaimFleet(cli, os.Getenv("ETCDSTORE_PATH"))
	name := os.Getenv("ETCDSTORE_NAME")
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("%s-%d", name, i)
		if err := f.register(ctx, id, l.Owner()); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	me, err := claim.Self()
	if err != nil {
		return err
	}
	me.Host, me.Boot = me.Host+"-elsewhere", "00000000-0000-4000-8000-000000000000"
	if err := f.register(ctx, name+"-host", me); err != nil {
		return err
	}
	b, _ := json.Marshal(l.Owner())
	fmt.Println(string(b))
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if strings.TrimSpace(in.Text()) != "finish" {
			continue
		}
		for _, id := range ids {
			if _, err := status.MutateAll(ctx, []status.AnyStore{f.reg, f.task(id)}, func(tx *status.Tx) error {
				return f.unregister(tx, id, status.Completed)
			}); err != nil {
				return err
			}
		}
		fmt.Println("finished")
	}
	return l.Revoke(ctx)
}
