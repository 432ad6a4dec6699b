package status

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWatch measures a commit seen by a watch: a Mutate and the
// watch's yield of it (inotify), next to the Mutate alone. (The polling
// fallback adds up to one interval, 500ms, by construction.)
func BenchmarkWatch(b *testing.B) {
	b.Run("mutate-only", func(b *testing.B) {
		path := benchPath(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Mutate(context.Background(), path, func(s *Status) error { s.Runs++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	{
		b.Run("mutate+yield", func(b *testing.B) {
			path := benchPath(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			next, stop := iter.Pull2(NewStore[Status](path).Watch(ctx))
			defer stop()
			next() // the current state
			b.ReportAllocs()
			for b.Loop() {
				st, err := Mutate(ctx, path, func(s *Status) error { s.Runs++; return nil })
				if err != nil {
					b.Fatal(err)
				}
				for {
					e, err, ok := next()
					if !ok || err != nil {
						b.Fatal(ok, err)
					}
					if e.Value.Runs == st.Runs {
						break
					}
				}
			}
		})
	}
}

// benchTree writes n status documents, one per task directory under
// <root>/<org>/<repo>/<task>, as a workspace root holds them.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	data := []byte(`{"status": "running", "runs": 1}` + "\n")
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("org%d", i%4), fmt.Sprintf("repo%d", i%16), fmt.Sprintf("task%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, StatusFile), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkList measures List over a root of 1,000 task directories (one
// status document each): the walk, the reads and the decodes.
func BenchmarkList(b *testing.B) {
	root := benchTree(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range List(root) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatal(n)
		}
	}
}
