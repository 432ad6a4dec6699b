package status_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/agentstate/core/status"
)

// Observing the file backend through log/slog: every Mutate, Create and
// Remove made with ctx logs its wait, batch, write and outcome; conflicts
// and corrupt documents at level WARN. A metrics library plugs in the same
// way (observe c.Wait and c.Write in histograms, count c.Err by kind,
// count c.Batch and c.Write only where c.Leader).
func ExampleWithObserver() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "status.json")

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		// Times, durations and the temp path change from run to run.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case "time", "wait", "lock", "write", "path":
				return slog.Attr{}
			}
			return a
		},
	}))
	ctx := status.WithObserver(context.Background(), &status.Observer{
		Done: func(c status.CallReport) {
			level := slog.LevelDebug
			if c.Err != nil {
				level = slog.LevelWarn
			}
			logger.Log(context.Background(), level, "status", "call", c)
		},
	})

	status.Mutate(ctx, path, status.Transition(status.Completed))
	status.Mutate(ctx, path, status.Transition(status.Running, status.Queued))
	// Output:
	// level=DEBUG msg=status call.op=mutate call.batch=1 call.leader=true
	// level=WARN msg=status call.op=mutate call.batch=1 call.leader=true call.err="status: cannot move from \"completed\" to \"running\" (allowed from queued): state conflict"
}
