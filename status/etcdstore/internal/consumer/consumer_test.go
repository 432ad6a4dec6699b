package consumer

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentstate/core/status/etcdstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun: the consumer links and runs; without a server, a path outside
// the root is refused before any request.
func TestRun(t *testing.T) {
	_, err := Run(context.Background(), nil, "/srv/ws", "/tmp/status.json")
	if !errors.Is(err, etcdstore.ErrOutsideRoot) {
		t.Fatalf("Run outside the root: %v; want ErrOutsideRoot", err)
	}
}

// TestRequirements: etcdstore requires a released core (not the v0.0.0
// placeholder that only its own replace could satisfy); this module's
// go.mod and go.sum are tidy; and neither etcdstore's tests nor this
// module's go.sum pull in the modules that only etcdstore's test servers
// and proofs use.
func TestRequirements(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if v := required(string(mod), "github.com/agentstate/core"); v == "" || v == "v0.0.0" || strings.Contains(v, "-") {
		t.Errorf("etcdstore requires core %q; want a released version", v)
	}
	if out, err := exec.Command("go", "mod", "tidy", "-diff").CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy -diff: %v\n%s", err, out)
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	deps, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}}{{end}}",
		"github.com/agentstate/core/status/etcdstore").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, deps)
	}
	for _, m := range []string{"go.etcd.io/etcd/server/v3", "go.etcd.io/bbolt", "go.etcd.io/raft/v3"} {
		if strings.Contains(string(sum), m+" ") {
			t.Errorf("go.sum records %s, which only etcdstore's test servers use", m)
		}
	}
	for _, m := range []string{"go.etcd.io/etcd/server/v3", "github.com/anishathalye/porcupine", "github.com/google/go-cmp", "pgregory.net/rapid"} {
		if slices.Contains(strings.Fields(string(deps)), m) {
			t.Errorf("etcdstore's tests import %s: importers would record it", m)
		}
	}
}

// required returns the version of path in a go.mod's require lines.
func required(gomod, path string) string {
	s := bufio.NewScanner(strings.NewReader(gomod))
	for s.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Text()), "require "))
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return ""
}
