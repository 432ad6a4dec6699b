package payload_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/internal/payload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRoundTrip(t *testing.T) {
	for seq := range 12 {
		b := payload.Make(seq, payload.Size(seq))
		if got, err := payload.Check(b); err != nil || got != seq {
			t.Errorf("Check(Make(%d)) = %d, %v", seq, got, err)
		}
	}
}

// Every damaged payload is refused: the checks can fail.
func TestCheckRefusesDamage(t *testing.T) {
	a, b := payload.Make(1, 200), payload.Make(2, 200)
	mixed := append(append([]byte(nil), a[:100]...), b[100:]...)
	flipped := append([]byte(nil), a...)
	flipped[len(flipped)-1] ^= 1
	for name, data := range map[string][]byte{
		"empty":     nil,
		"header":    a[:20],
		"truncated": a[:len(a)-1],
		"appended":  append(append([]byte(nil), a...), 'x'),
		"mixed":     mixed,
		"flipped":   flipped,
		"no header": []byte("seq=1;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	} {
		if seq, err := payload.Check(data); err == nil {
			t.Errorf("%s: Check accepted it as seq %d", name, seq)
		}
	}
}
