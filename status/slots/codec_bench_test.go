package slots_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
)

type plainAgent struct {
	ID         string            `json:"id"`
	Key        string            `json:"key,omitempty"`
	Parent     string            `json:"parent,omitempty"`
	Depth      int               `json:"depth"`
	Owner      claim.Owner       `json:"owner"`
	ReservedAt time.Time         `json:"reserved_at"`
	AdoptedAt  time.Time         `json:"adopted_at,omitzero"`
	Docs       []string          `json:"docs,omitempty"`
	Resources  map[string]string `json:"resources,omitempty"`
}

func sample(n int) []byte {
	var r slots.Registry
	o, _ := claim.Self()
	for i := range n {
		r.Agents = append(r.Agents, slots.Slot{ID: fmt.Sprintf("%016x", i), Key: fmt.Sprintf("task-%d", i), Owner: o, ReservedAt: time.Now().UTC(), Docs: []string{"a/status.json"}, Resources: map[string]string{"prompt": "/tmp/x"}})
	}
	b, _ := json.Marshal(r)
	return b
}

// BenchmarkCodec decodes and encodes a registry of 24 slots, next to a plain
// struct of the same members (which keeps no other member and checks nothing).
func BenchmarkCodec(b *testing.B) {
	data := sample(24)
	b.Run("slots", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r slots.Registry
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r struct {
				Agents []plainAgent `json:"agents"`
			}
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
