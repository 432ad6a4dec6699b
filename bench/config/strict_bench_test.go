package config_test

import (
	"strings"
	"testing"

	"github.com/agentstate/core/config"
)

// BenchmarkDecodeStrict puts Decode with RejectUnknownKeys next to Decode
// without it, on the section of BenchmarkConvert's Decode-struct and on a
// larger one (a struct of 8 fields, a list of 4 structs).
func BenchmarkDecodeStrict(b *testing.B) {
	c := config.New()
	if err := c.Load(strings.NewReader(`{"db": {"host": "h", "port": 5432},
		"dispatch": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7,
			"queues": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2}, {"name": "c", "weight": 3}, {"name": "d", "weight": 4}]}}`)); err != nil {
		b.Fatal(err)
	}
	type db struct {
		Host string
		Port int
	}
	type queue struct {
		Name   string
		Weight int
	}
	type dispatch struct {
		A, B, C, D, E, F, G int
		Queues              []queue
	}
	strict := config.RejectUnknownKeys()
	b.Run("section=db/strict=no", func(b *testing.B) {
		for b.Loop() {
			sinkAny, _ = config.Decode[db](c.Snapshot(), "db")
		}
	})
	b.Run("section=db/strict=yes", func(b *testing.B) {
		for b.Loop() {
			sinkAny, sinkErr = config.Decode[db](c.Snapshot(), "db", strict)
		}
	})
	b.Run("section=dispatch/strict=no", func(b *testing.B) {
		for b.Loop() {
			sinkAny, _ = config.Decode[dispatch](c.Snapshot(), "dispatch")
		}
	})
	b.Run("section=dispatch/strict=yes", func(b *testing.B) {
		for b.Loop() {
			sinkAny, sinkErr = config.Decode[dispatch](c.Snapshot(), "dispatch", strict)
		}
	})
	if sinkErr != nil {
		b.Fatal(sinkErr)
	}
}
