//go:build linux

package powerloss_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentstate/core/status"
	"github.com/agentstate/core/status/txfile"
)

// The transaction variants. The writer commits, again and again, one
// change of two documents in two directories, both set to version v, and
// prints "T v" once the commit returned nil. The test SIGKILLs it at a
// random moment (up to one commit's duration after an acknowledgement, so
// that the kill lands anywhere in a commit: creating a marker, before or
// after a sync, between two renames), cuts the power, remounts, and then
// recovers as the next locker (status.LoadAll). Both documents must be
// whole, at one version, and not older than the last acknowledged. The
// control makes the same change without the journal, one Mutate per
// document: a cut between them leaves one document new and the other old.
var txVariants = map[string]struct {
	control bool
	commit  func(a, b string, v int) error
}{
	"tx":                     {commit: txCommit},
	"control-tx-two-mutates": {control: true, commit: twoMutates},
}

const txOrder = "tx control-tx-two-mutates"

// txDocs are the two documents of the transaction variants under mnt.
func txDocs(mnt string) (a, b string) {
	return filepath.Join(mnt, "txa", "status.json"), filepath.Join(mnt, "txb", "status.json")
}

func txCommit(a, b string, v int) error {
	sa, sb := status.NewStore[status.Status](a), status.NewStore[status.Status](b)
	_, _, err := status.MutateAll2(context.Background(), sa, sb, func(da, db *status.Status) error {
		for _, d := range []*status.Status{da, db} {
			d.Runs, d.Note = v, string(body(v))
		}
		return nil
	})
	return err
}

// twoMutates is the CONTROL: the same change without the journal, each
// document written durably by a Mutate of its own, as a program without
// transactions does it.
func twoMutates(a, b string, v int) error {
	for _, p := range []string{a, b} {
		if _, err := status.Mutate(context.Background(), p, func(s *status.Status) error {
			s.Runs, s.Note = v, string(body(v))
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// txWriterMain is the writer child of a transaction variant.
func txWriterMain(commit func(a, b string, v int) error) {
	start, err := strconv.Atoi(os.Getenv(envStart))
	if err != nil {
		os.Exit(2)
	}
	a, b := txDocs(os.Getenv(envDir))
	for v := start; ; v++ {
		if err := commit(a, b, v); err != nil {
			fmt.Fprintf(os.Stderr, "writer: T %d: %v\n", v, err)
			os.Exit(1)
		}
		if _, err := fmt.Printf("T %d\n", v); err != nil {
			os.Exit(0)
		}
	}
}

// txResult counts a transaction variant's rounds.
type txResult struct {
	acked, inCommit, torn int
	lost                  []string
}

func testTxVariants(t *testing.T, bin, work string, seed uint64, rounds int) {
	for _, name := range strings.Fields(txOrder) {
		t.Run(name, func(t *testing.T) {
			dir, err := os.MkdirTemp(work, name+".")
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, uint64(len(name))))
			res := runTxVariant(t, bin, dir, name, rounds, rng)
			t.Logf("%d rounds, %d acknowledged transactions; %d cuts found a commit's files, %d with a marker its cut left empty; %d rounds lost or tore a transaction",
				rounds, res.acked, res.inCommit, res.torn, len(res.lost))
			logLost(t, res.lost)
			switch {
			// A cut lands between the control's two writes in only some
			// rounds (about half); one is enough to show that the harness
			// cuts inside multi-document changes and sees a half-applied one.
			case txVariants[name].control && len(res.lost) == 0:
				t.Fatalf("CONTROL %s never left a transaction half-applied in %d rounds: the harness does not cut inside commits", name, rounds)
			case !txVariants[name].control && len(res.lost) > 0:
				t.Fatalf("%s lost or tore transactions in %d of %d rounds (seed %d)", name, len(res.lost), rounds, seed)
			}
		})
	}
}

func runTxVariant(t *testing.T, bin, dir, name string, rounds int, rng *rand.Rand) txResult {
	l := newLazyFS(t, bin, dir)
	a, b := txDocs(l.mnt)
	for _, p := range []string{a, b} {
		if err := os.Mkdir(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := txCommit(a, b, 0); err != nil {
		t.Fatal(err)
	}
	var res txResult
	next := 1
	for r := range rounds {
		last := runTxWriter(t, l, name, next, 1+rng.IntN(maxAcks), rng)
		l.clearCache(t)
		l.remount(t)
		res.acked += last - next + 1
		files, torn := txFiles(t, a, b)
		if len(files) > 0 {
			res.inCommit++
		}
		if torn {
			res.torn++
		}
		got, lost := verifyTx(t, a, b, last)
		if lost != "" {
			res.lost = append(res.lost, fmt.Sprintf("round %d: %s (files at the cut: %v)", r, lost, files))
		}
		next = max(last, got) + 2
	}
	return res
}

// runTxWriter starts a writer at version start, lets it acknowledge kill
// transactions, waits up to one commit's duration more, SIGKILLs and reaps
// it, and returns the last version it acknowledged.
func runTxWriter(t *testing.T, l *lazyFS, name string, start, kill int, rng *rand.Rand) int {
	t.Helper()
	last := start - 1
	var prev, at time.Time
	// The moment of the cut: up to one commit's duration (the time between
	// the last two acknowledgements) after the last one. It picks the
	// moment; nothing waits on it.
	cut := func() {
		if !prev.IsZero() {
			time.Sleep(time.Duration(rng.Int64N(int64(at.Sub(prev)) + 1)))
		}
	}
	runChild(t, l, []string{envVariant + "=" + name, envDir + "=" + l.mnt, envStart + "=" + strconv.Itoa(start)}, kill, cut, func(line string) {
		v, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "T "))
		if err != nil || !strings.HasPrefix(line, "T ") || v != last+1 {
			t.Fatalf("writer printed %q after version %d", line, last)
		}
		last = v
		prev, at = at, time.Now()
	})
	return last
}

// txFiles lists the transaction files beside the documents after the cut,
// before recovery, and reports whether a marker is empty (created, its
// content never synced).
func txFiles(t *testing.T, docs ...string) (files []string, torn bool) {
	t.Helper()
	for _, d := range docs {
		ents, err := os.ReadDir(filepath.Dir(d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !txfile.Is(e.Name()) {
				continue
			}
			files = append(files, e.Name())
			if strings.HasSuffix(e.Name(), txfile.MarkerSuffix) {
				if fi, err := e.Info(); err == nil && fi.Size() == 0 {
					torn = true
				}
			}
		}
	}
	return files, torn
}

// verifyTx recovers as the next locker and checks the two documents: whole,
// one version, not older than last. It returns that version and what was
// wrong, or "".
func verifyTx(t *testing.T, a, b string, last int) (int, string) {
	t.Helper()
	sa, sb := status.NewStore[status.Status](a), status.NewStore[status.Status](b)
	if _, err := status.LoadAll(context.Background(), sa, sb); err != nil {
		if errors.Is(err, status.ErrTxUntrusted) || errors.Is(err, status.ErrTxConflict) {
			return 0, fmt.Sprintf("recovery refused: %v", err)
		}
		t.Fatal(err)
	}
	var vs [2]int
	for i, p := range []string{a, b} {
		data, err := os.ReadFile(p)
		if err != nil {
			return 0, fmt.Sprintf("%s: %v", filepath.Base(filepath.Dir(p)), err)
		}
		if vs[i], err = checkStatus(data); err != nil {
			return 0, fmt.Sprintf("%s: %v", filepath.Base(filepath.Dir(p)), err)
		}
	}
	switch {
	case vs[0] != vs[1]:
		return max(vs[0], vs[1]), fmt.Sprintf("half-applied: versions %d and %d, last acknowledged %d", vs[0], vs[1], last)
	case vs[0] < last || vs[0] > last+1:
		return vs[0], fmt.Sprintf("version %d, last acknowledged %d", vs[0], last)
	}
	if files, _ := txFiles(t, a, b); len(files) > 0 {
		return vs[0], fmt.Sprintf("left after recovery: %v", files)
	}
	return vs[0], ""
}
