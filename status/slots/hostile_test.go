package slots_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

// TestDocPathRefusesLinkOut: a member of a shared workspace who can write
// the registry plants a directory link inside the registry's directory that
// leads out of it, and names a document through it. DocPath refuses it, so a
// reaper that builds its edits with DocPath changes nothing outside; a link
// that stays inside is followed. CONTROL: the name has the shape
// docs/PROTOCOL.md allows, and the path built from it by its shape alone
// (the lexical join) names the document outside, which a reap through it
// changes.
func TestDocPathRefusesLinkOut(t *testing.T) {
	ctx := context.Background()
	ws, outside := t.TempDir(), t.TempDir()
	victim := status.NewStore[status.Status](filepath.Join(outside, "status.json"))
	writeFile(t, victim.Name(), `{"status": "running"}`)
	if err := os.Symlink(outside, filepath.Join(ws, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(ws, "alias")); err != nil {
		t.Fatal(err)
	}
	reg := status.NewStore[slots.Registry](filepath.Join(ws, "registry.json"))
	planted := `{"agents": [{"id": "x", "depth": 0, "owner": {"host": "h", "pid": 1}, "docs": ["evil/status.json"]}], "max_concurrent": 4}`
	writeFile(t, reg.Name(), planted)

	if _, err := slots.DocPath(reg, "evil/status.json"); !errors.Is(err, fs.ErrOutsideRoot) || !errors.Is(err, slots.ErrInvalid) {
		t.Errorf("DocPath through a link out: %v; want ErrOutsideRoot and ErrInvalid", err)
	}
	if p, err := slots.DocPath(reg, "alias/status.json"); err != nil || p != filepath.Join(ws, "alias", "status.json") {
		t.Errorf("DocPath through a link inside: %q, %v", p, err)
	}
	if p, err := slots.DocPath(reg, "missing/status.json"); err != nil || p != filepath.Join(ws, "missing", "status.json") {
		t.Errorf("DocPath of a directory not made yet: %q, %v", p, err)
	}

	dead := slots.WithCheck(func(context.Context, claim.Owner) (claim.Liveness, error) { return claim.Dead, nil })
	failTask := func(path func(string) (string, error)) func(slots.Slot) (slots.Edit, error) {
		return func(s slots.Slot) (slots.Edit, error) {
			p, err := path(s.Docs[0])
			if err != nil {
				return slots.Edit{}, err
			}
			return slots.Transition(status.NewStore[status.Status](p), status.Failed, status.Running), nil
		}
	}
	res, err := slots.Reap(ctx, reg, failTask(func(name string) (string, error) { return slots.DocPath(reg, name) }), dead)
	if !errors.Is(err, fs.ErrOutsideRoot) || len(res.Released) != 0 {
		t.Errorf("reap with DocPath: released %d, %v; want an error matching ErrOutsideRoot", len(res.Released), err)
	}
	if st, err := victim.Load(ctx); err != nil || st.State != status.Running {
		t.Errorf("the document outside: %q, %v; want it unchanged", st.State, err)
	}
	if _, err := os.Lstat(victim.Name() + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reap made a lock file outside: %v", err)
	}

	lexical := func(name string) (string, error) { return filepath.Join(ws, filepath.FromSlash(name)), nil }
	if _, err := slots.Reap(ctx, reg, failTask(lexical), dead); err != nil {
		t.Fatalf("CONTROL: reap through the lexical path: %v", err)
	}
	if st, err := victim.Load(ctx); err != nil || st.State != status.Failed {
		t.Fatalf("CONTROL: the lexical path did not reach the document outside (%q, %v): the test shows nothing", st.State, err)
	}
}

// manySlots returns the text of a registry with n slots, owned by pids 0
// to n-1 of host h, as a member who can write the registry may fill it.
func manySlots(n int) string {
	var b strings.Builder
	b.WriteString(`{"max_concurrent": 1, "agents": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": "s%d", "depth": 0, "owner": {"host": "h", "pid": %d}}`, i, i)
	}
	b.WriteString("]}\n")
	return b.String()
}

// TestReapHonoursContext: Reap and List of a registry with many owners
// stop asking about owners once ctx is done, and Reap writes nothing.
// CONTROL: the same calls with a ctx that stays alive ask about every
// owner.
func TestReapHonoursContext(t *testing.T) {
	const n, stopAt = 2000, 10
	reg := status.NewStore[slots.Registry](filepath.Join(t.TempDir(), "registry.json"))
	text := manySlots(n)
	writeFile(t, reg.Name(), text)
	counting := func(cancel context.CancelFunc, calls *int) slots.Option {
		return slots.WithCheck(func(context.Context, claim.Owner) (claim.Liveness, error) {
			if *calls++; *calls == stopAt && cancel != nil {
				cancel()
			}
			return claim.Dead, nil
		})
	}
	for _, op := range []string{"reap", "list"} {
		ctx, cancel := context.WithCancel(context.Background())
		calls, control := 0, 0
		var err error
		if op == "reap" {
			_, err = slots.Reap(ctx, reg, nil, counting(cancel, &calls))
		} else {
			_, err = slots.List(ctx, reg, counting(cancel, &calls))
		}
		cancel()
		if !errors.Is(err, context.Canceled) || calls != stopAt {
			t.Errorf("%s: %d owners asked about, %v; want %d and context.Canceled", op, calls, err, stopAt)
		}
		if b, _ := os.ReadFile(reg.Name()); string(b) != text {
			t.Errorf("%s: the registry changed", op)
		}
		if op == "list" {
			if _, err := slots.List(context.Background(), reg, counting(nil, &control)); err != nil || control != n {
				t.Errorf("CONTROL: list asked about %d owners, %v; want %d", control, err, n)
			}
		}
	}
}

// BenchmarkReapManySlots: Reap of a registry that a member filled with
// slots, half of them dead, half unknown, at two sizes in the same run:
// the time per slot stays flat (it grew with the number of slots when
// each release searched and shifted the slots, hours at the default size
// limit, with the registry locked).
func BenchmarkReapManySlots(b *testing.B) {
	evenDead := slots.WithCheck(func(_ context.Context, o claim.Owner) (claim.Liveness, error) {
		if o.PID%2 == 0 {
			return claim.Dead, nil
		}
		return claim.Unknown, nil
	})
	for _, n := range []int{5000, 20000} {
		b.Run(fmt.Sprintf("slots=%d", n), func(b *testing.B) {
			reg := status.NewStore[slots.Registry](filepath.Join(b.TempDir(), "registry.json"))
			text := []byte(manySlots(n))
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				if err := os.WriteFile(reg.Name(), text, 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := slots.Reap(ctx, reg, nil, evenDead)
				if err != nil || len(res.Released) != n/2 {
					b.Fatalf("released %d, %v", len(res.Released), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/slot")
		})
	}
}
