package status

import (
	"context"
	"testing"
)

// BenchmarkCodec measures the JSON document layer without the disk: Mutate
// on an in-memory backend (the encoding of the last write is reused), Mutate
// after another writer (every call decodes), and Load of a file (decodes).
func BenchmarkCodec(b *testing.B) {
	ctx := context.Background()
	b.Run("MutateMem", func(b *testing.B) {
		s := NewStore[Status]("mem", WithBackend(func(string) Backend { return &memBackend{} }))
		st := typicalStatus()
		s.Mutate(ctx, func(v *Status) error { *v = st; return nil })
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Mutate(ctx, func(v *Status) error { v.Runs++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MutateMemDecode", func(b *testing.B) {
		mem := &memBackend{}
		s := NewStore[Status]("mem", WithBackend(func(string) Backend { return mem }))
		st := typicalStatus()
		s.Mutate(ctx, func(v *Status) error { *v = st; return nil })
		b.ReportAllocs()
		for b.Loop() {
			mem.doc = append([]byte(" "), mem.doc...) // bytes this process did not write
			if _, err := s.Mutate(ctx, func(v *Status) error { v.Runs++; return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load", func(b *testing.B) {
		path := benchPath(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load(ctx, path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
