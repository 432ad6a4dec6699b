package core_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/agentstate/core/core"
)

// TestTaskGroupStateMachine drives random sequences of Core.Go, task
// completion, timed-out Shutdown and Go-after-Shutdown, and checks Running
// and the ShutdownError against a model. A task that was released may or may not have
// deregistered yet, so the model gives bounds: every stuck task must be
// listed, and nothing but stuck or released tasks may be.
func TestTaskGroupStateMachine(t *testing.T) {
	base := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(base, "")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		g, err := core.New(dir, core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		if err != nil {
			t.Fatal(err)
		}
		type task struct {
			name    string
			release chan struct{}
		}
		var stuck, released []task
		closed := false
		defer func() {
			for _, tk := range stuck {
				close(tk.release)
			}
			if err := g.Shutdown(context.Background()); err != nil {
				t.Fatalf("final shutdown: %v", err)
			}
			if r := g.Running(); len(r) != 0 {
				t.Fatalf("running after final shutdown: %v", r)
			}
		}()
		checkBounds := func(got []string) {
			must := map[string]int{}
			for _, tk := range stuck {
				must[tk.name]++
			}
			may := maps.Clone(must)
			for _, tk := range released {
				may[tk.name]++
			}
			have := map[string]int{}
			for _, n := range got {
				have[n]++
			}
			for n, c := range must {
				if have[n] < c {
					t.Fatalf("running %v: want at least %d %q", got, c, n)
				}
			}
			for n, c := range have {
				if c > may[n] {
					t.Fatalf("running %v: at most %d %q may run", got, may[n], n)
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"go": func(t *rapid.T) {
				name := rapid.SampledFrom([]string{"spawn", "drain", "sweep"}).Draw(t, "name")
				tk := task{name, make(chan struct{})}
				err := g.Go(name, func(ctx context.Context) { <-tk.release })
				if closed {
					if !errors.Is(err, core.ErrClosed) {
						t.Fatalf("go after shutdown: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				stuck = append(stuck, tk)
			},
			"finish": func(t *rapid.T) {
				if len(stuck) == 0 {
					t.Skip("nothing running")
				}
				i := rapid.IntRange(0, len(stuck)-1).Draw(t, "i")
				close(stuck[i].release)
				released = append(released, stuck[i])
				stuck = append(stuck[:i], stuck[i+1:]...)
			},
			"shutdownTimeout": func(t *rapid.T) {
				if len(stuck) == 0 {
					t.Skip("would succeed")
				}
				closed = true
				// A deadline already passed.
				ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
				defer cancel()
				err := g.Shutdown(ctx)
				var serr *core.ShutdownError
				if !errors.As(err, &serr) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("shutdown with stuck tasks: %v", err)
				}
				checkBounds(serr.Running)
			},
			"": func(t *rapid.T) {
				checkBounds(g.Running())
			},
		})
	})
}
