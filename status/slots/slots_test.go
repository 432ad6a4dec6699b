package slots_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/claim"
	"github.com/agentstate/core/status/slots"
	"github.com/agentstate/core/status/slots/slotstest"
)

// TestSuite runs the backends' suite on files, with processes as owners
// where claim.Local can tell their end (processOwner).
func TestSuite(t *testing.T) {
	slotstest.Run(t, slotstest.Harness{NewOwner: processOwner})
}

// Reserve records the slot as docs/PROTOCOL.md lays it out, and keeps the
// registry's and the slots' members it does not declare.
func TestLayout(t *testing.T) {
	slots.SetClock(t, time.Date(2026, 11, 30, 9, 14, 3, 118220000, time.UTC))
	dir := t.TempDir()
	reg := status.NewStore[slots.Registry](filepath.Join(dir, "registry.json"))
	writeFile(t, reg.Name(), `{"max_concurrent": 4, "max_depth": 1, "hierarchy": {"x": ["y"]}, "agents": [
		{"id": "p", "depth": 0, "type": "planner", "extra": {"b": 1, "a": [1e400, "<&>"]}, "owner": {"host": "h", "pid": 7}}]}`)
	if err := os.Mkdir(filepath.Join(dir, "fix"), 0o755); err != nil {
		t.Fatal(err)
	}
	task := status.NewStore[status.Status](filepath.Join(dir, "fix", "status.json"))
	if _, err := task.Create(context.Background(), status.Status{State: status.Queued}); err != nil {
		t.Fatal(err)
	}
	var m status.Document
	if err := m.Encode("type", "reviewer"); err != nil {
		t.Fatal(err)
	}
	_, err := slots.Reserve(context.Background(), reg, slots.Request{ID: "c", Key: "k", Parent: "p", Owner: claim.Owner{Host: "h", PID: 8},
		Resources: map[string]string{"log": "/l", "prompt": "/p"}, Members: m}, slots.Transition(task, status.Running, status.Queued))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "agents": [
    {
      "id": "p",
      "depth": 0,
      "owner": {
        "host": "h",
        "pid": 7
      },
      "extra": {
        "b": 1,
        "a": [
          1e400,
          "<&>"
        ]
      },
      "type": "planner"
    },
    {
      "id": "c",
      "key": "k",
      "parent": "p",
      "depth": 1,
      "owner": {
        "host": "h",
        "pid": 8
      },
      "reserved_at": "2026-11-30T09:14:03.11822Z",
      "docs": [
        "fix/status.json"
      ],
      "resources": {
        "log": "/l",
        "prompt": "/p"
      },
      "type": "reviewer"
    }
  ],
  "active_count": 2,
  "total_spawned": 2,
  "max_concurrent": 4,
  "max_depth": 1,
  "hierarchy": {"x": ["y"]}
}
`
	if got := readFile(t, reg.Name()); got != want {
		t.Errorf("registry:\n%s\nwant:\n%s", got, want)
	}
}

// A slot survives a decode and an encode with every member as it was,
// the layout aside.
func TestSlotRoundTrip(t *testing.T) {
	in := `{"id":"a","key":"k","parent":"p","depth":1,"owner":{"host":"h","pid":3,"start":9},"reserved_at":"2026-01-02T03:04:05.000006Z","adopted_at":"2026-01-02T03:04:06+01:00","docs":["x/status.json"],"resources":{"a":"1"},"big":123456789012345678901234567890,"nested":{"z":1,"a":"\u00e9"}}`
	var s slots.Slot
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n%s\nwant:\n%s", out, in)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The registry of docs/PROTOCOL.md's example is byte for byte what a Store
// writes when it stores the registry it decodes to.
func TestProtocolExample(t *testing.T) {
	doc := readFile(t, filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	_, after, _ := strings.Cut(doc, "### The registry\n\n```json\n")
	example, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("no json block after \"### The registry\" in docs/PROTOCOL.md")
	}
	var r slots.Registry
	if err := json.Unmarshal([]byte(example), &r); err != nil {
		t.Fatal(err)
	}
	reg := status.NewStore[slots.Registry](filepath.Join(t.TempDir(), "AGENT_REGISTRY.json"))
	if _, err := reg.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, reg.Name()); got != example {
		t.Errorf("a Store writes\n%s\nPROTOCOL.md shows\n%s", got, example)
	}
}
