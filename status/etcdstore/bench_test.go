package etcdstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/etcdstore/internal/etcdtest"
)

var benchServer struct {
	once sync.Once
	srv  *etcdtest.Cluster
	dir  string
	err  error
}

// fsyncServer is the benchmarks' server. Unlike the tests' server it
// fsyncs, as the file backend does, so that the comparison is fair. It lives
// on the same disk as the file backend's documents (the temp directory).
func fsyncServer(b *testing.B) *etcdtest.Cluster {
	benchServer.once.Do(func() {
		benchServer.dir, benchServer.err = os.MkdirTemp("", "etcdstore-bench-")
		if benchServer.err == nil {
			benchServer.srv, benchServer.err = etcdtest.Start(filepath.Join(benchServer.dir, "data"), etcdtest.Options{Fsync: true})
		}
	})
	if benchServer.err != nil {
		b.Fatalf("etcd: %v", benchServer.err)
	}
	return benchServer.srv
}

var benchClients = []int{1, 16, 64}

// BenchmarkMutate measures Mutate (one increment) throughput, latency and
// fairness with 1, 16 and 64 concurrent clients, all on one document or
// each on its own, for the file backend (status.NewStore's default) and the
// etcd backend side by side in the same run:
//
//   - file: status.NewStore's default; each client its own Store.
//   - etcd: each client its own clientv3.Client and With, as separate hosts
//     would be: contenders on one key meet in etcd (optimistic first, then
//     FIFO turns).
//   - etcd-optimistic: like etcd, but contenders only retry optimistic
//     transactions with backoff (no turns), to show what turns change.
//   - etcd-shared: all clients are goroutines of one service sharing one
//     clientv3.Client and one With, which group-commits them.
//   - etcd-mutex: like etcd, but contenders take etcd's own lock recipe
//     (clientv3/concurrency.Mutex) around each guarded read-modify-write,
//     without markers: the alternative to turns (one key only).
//   - etcd-nomarker: like etcd-optimistic, but the guarded transaction
//     without the exactly-once marker, to price the marker.
//
// Besides ops/s it reports p50 and p99 latency and the spread of the
// clients' shares of the operations (the busiest client's count over the
// mean, and the mean over the least busy client's).
func BenchmarkMutate(b *testing.B) {
	endpoint := fsyncServer(b).Endpoint()
	clis := make([]*clientv3.Client, slices.Max(benchClients))
	for i := range clis {
		clis[i] = newClient(b, endpoint)
	}
	dir := b.TempDir()
	for _, keys := range []string{"one-key", "distinct-keys"} {
		for _, n := range benchClients {
			for _, backend := range []string{"file", "etcd", "etcd-optimistic", "etcd-mutex", "etcd-shared", "etcd-nomarker"} {
				if backend == "etcd-mutex" && keys != "one-key" {
					continue // a lock per key is for hot keys
				}
				b.Run(fmt.Sprintf("%s/clients=%d/%s", keys, n, backend), func(b *testing.B) {
					run := fmt.Sprintf("%s-%d-%s-%d", keys, n, backend, b.N)
					stores := make([]*status.Store[counter], n)
					sharedOpt := With(clis[0])
					for i := range stores {
						path := filepath.Join(dir, run, "status.json")
						if keys == "distinct-keys" {
							path = filepath.Join(dir, run, fmt.Sprint(i), "status.json")
						}
						if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
							b.Fatal(err)
						}
						var opts []status.Option
						switch backend {
						case "etcd":
							opts = append(opts, With(clis[i]))
						case "etcd-optimistic":
							opts = append(opts, With(clis[i], withoutTurns()))
						case "etcd-shared":
							opts = append(opts, sharedOpt)
						case "etcd-nomarker":
							opts = append(opts, withUnmarked(clis[i]))
						case "etcd-mutex":
							opts = append(opts, withMutex(b, clis[i]))
						}
						stores[i] = status.NewStore[counter](path, opts...)
					}
					benchMutate(b, stores)
				})
			}
		}
	}
}

// BenchmarkHotKey measures the goals for one hot key written by
// independent clients (each its own clientv3.Client and With, as separate
// hosts): throughput with 16 and 64 clients relative to one client, the
// ratio of p99 to p50 latency, and how evenly the clients share the
// operations. Rounds of 1, 16 and 64 clients alternate (each round shares
// a budget of 256 increments among its clients), so that a machine whose
// load changes during the run affects every configuration alike; -benchtime
// sets the number of rounds per configuration (e.g. -benchtime=6x).
func BenchmarkHotKey(b *testing.B) {
	endpoint := fsyncServer(b).Endpoint()
	clis := make([]*clientv3.Client, slices.Max(benchClients))
	for i := range clis {
		clis[i] = newClient(b, endpoint)
	}
	dir := b.TempDir()
	for _, backend := range []string{"etcd", "etcd-optimistic", "etcd-mutex"} {
		b.Run(backend, func(b *testing.B) {
			path := filepath.Join(dir, backend+"-"+strconv.Itoa(b.N), "status.json")
			stores := make([]*status.Store[counter], len(clis))
			for i, cli := range clis {
				opt := With(cli)
				switch backend {
				case "etcd-optimistic":
					opt = With(cli, withoutTurns())
				case "etcd-mutex":
					opt = withMutex(b, cli)
				}
				stores[i] = status.NewStore[counter](path, opt)
			}
			const budget = 256
			type totals struct {
				ops     int
				elapsed time.Duration
				lat     []time.Duration
				share   []int // per client
			}
			runs := make(map[int]*totals)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, n := range benchClients {
					tot := runs[n]
					if tot == nil {
						tot = &totals{share: make([]int, n)}
						runs[n] = tot
					}
					lat, elapsed := round(b, stores[:n], budget)
					tot.elapsed += elapsed
					for i, l := range lat {
						tot.ops += len(l)
						tot.share[i] += len(l)
						tot.lat = append(tot.lat, l...)
					}
				}
			}
			b.StopTimer()
			base := float64(runs[1].ops) / runs[1].elapsed.Seconds()
			for _, n := range benchClients {
				tot := runs[n]
				rate := float64(tot.ops) / tot.elapsed.Seconds()
				slices.Sort(tot.lat)
				p50, p99 := tot.lat[len(tot.lat)/2], tot.lat[min(len(tot.lat)-1, len(tot.lat)*99/100)]
				sfx := "-" + strconv.Itoa(n)
				b.ReportMetric(rate, "ops/s"+sfx)
				if n == 1 {
					continue
				}
				b.ReportMetric(rate/base, "vs1"+sfx)
				b.ReportMetric(float64(p99)/float64(p50), "p99/p50"+sfx)
				mean := float64(tot.ops) / float64(n)
				b.ReportMetric(float64(slices.Max(tot.share))/mean, "max/mean"+sfx)
				b.ReportMetric(mean/max(float64(slices.Min(tot.share)), 0.5), "mean/min"+sfx)
			}
		})
	}
}

// round runs budget increments shared by stores (one goroutine each) and
// returns each one's latencies and the round's duration.
func round(b *testing.B, stores []*status.Store[counter], budget int64) ([][]time.Duration, time.Duration) {
	ctx := context.Background()
	inc := func(c *counter) error { c.N++; return nil }
	lat := make([][]time.Duration, len(stores))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i, st := range stores {
		wg.Go(func() {
			for next.Add(1) <= budget {
				t0 := time.Now()
				if _, err := st.Mutate(ctx, inc); err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	return lat, time.Since(start)
}

// withoutTurns makes contenders retry optimistically only.
func withoutTurns() Option { return func(c *config) { c.noTurns = true } }

func benchMutate(b *testing.B, stores []*status.Store[counter]) {
	b.ReportAllocs()
	b.ResetTimer()
	lat, elapsed := round(b, stores, int64(b.N))
	b.StopTimer()
	all := slices.Sorted(func(yield func(time.Duration) bool) {
		for _, l := range lat {
			for _, d := range l {
				if !yield(d) {
					return
				}
			}
		}
	})
	if len(all) == 0 {
		return
	}
	p50 := all[len(all)/2]
	p99 := all[min(len(all)-1, len(all)*99/100)]
	b.ReportMetric(float64(p50)/float64(time.Microsecond), "p50-µs")
	b.ReportMetric(float64(p99)/float64(time.Microsecond), "p99-µs")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "ops/s")
	if len(lat) > 1 {
		mean := float64(len(all)) / float64(len(lat))
		least, most := len(all), 0
		for _, l := range lat {
			least, most = min(least, len(l)), max(most, len(l))
		}
		b.ReportMetric(float64(most)/mean, "share-max/mean")
		b.ReportMetric(mean/max(float64(least), 0.5), "share-mean/min")
	}
}

// unmarkedBackend is the alternative without commit markers: the same
// guarded transaction and backoff, but a lost response cannot be told from
// a lost request. Benchmarks only: it is not exactly-once.
type unmarkedBackend struct{ bareBackend }

func withUnmarked(cli *clientv3.Client) status.Option {
	return status.WithBackend(func(path string) status.Backend {
		return &unmarkedBackend{bareBackend{cli: cli, path: path, key: key(path)}}
	})
}

func (b *unmarkedBackend) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	resp, err := b.cli.Get(ctx, b.key)
	if err != nil {
		return err
	}
	cur, rev := value(resp.Kvs)
	bo := newBackoff(newConfig(nil))
	for {
		next, err := apply(cur)
		if err != nil || string(next) == string(cur) {
			return err
		}
		tr, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(b.key), "=", rev)).
			Then(clientv3.OpPut(b.key, string(next))).Else(clientv3.OpGet(b.key)).Commit()
		if err != nil {
			return err
		}
		if tr.Succeeded {
			return nil
		}
		cur, rev = value(tr.Responses[0].GetResponseRange().Kvs)
		if err := bo.wait(ctx, b.cli); err != nil {
			return err
		}
	}
}

// mutexBackend is the alternative to turns: etcd's lock recipe
// (clientv3/concurrency.Mutex: a key per waiter, FIFO by create revision,
// each waiter watching the one ahead, bound to a session lease that a
// goroutine keeps alive) around the guarded read-modify-write. Benchmarks
// only: a proposal to lock, one to commit and one to unlock per Update, and
// no exactly-once markers.
type mutexBackend struct {
	bareBackend
	session *concurrency.Session
}

func withMutex(b *testing.B, cli *clientv3.Client) status.Option {
	session, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { session.Close() })
	return status.WithBackend(func(path string) status.Backend {
		return &mutexBackend{bareBackend{cli: cli, path: path, key: key(path)}, session}
	})
}

func (b *mutexBackend) Update(ctx context.Context, apply func([]byte) ([]byte, error)) error {
	mu := concurrency.NewMutex(b.session, b.key+"#lock")
	if err := mu.Lock(ctx); err != nil {
		return err
	}
	defer mu.Unlock(context.WithoutCancel(ctx))
	for {
		resp, err := b.cli.Get(ctx, b.key)
		if err != nil {
			return err
		}
		cur, rev := value(resp.Kvs)
		next, err := apply(cur)
		if err != nil || string(next) == string(cur) {
			return err
		}
		tr, err := b.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(b.key), "=", rev)).
			Then(clientv3.OpPut(b.key, string(next))).Commit()
		if err != nil || tr.Succeeded {
			return err
		}
	}
}
