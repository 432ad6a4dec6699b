//go:build linux

package status

// What an unprivileged member of a shared workspace can plant next to a
// root service's documents must never make the service's recovery hang,
// open a device, install the member's file, delete what the member could
// not, or work on after its ctx ended. Each test counts over its rounds and
// runs the same rounds against the earlier recovery (useLegacyRecovery) or
// with one rule switched off (journal.Seams): that control must show the
// failure.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstate/core/status/internal/journal"
)

func bumpRuns(s *Status) error { s.Runs++; return nil }

// Failure 1: the member plants a marker and a journal that lists a path
// whose lexical parent is their named pipe. The earlier recovery opened
// that pipe for a sync and blocked for ever, holding the lock, past its
// ctx; the recovery refuses the journal (paths must be clean) and never
// opens anything a journal lists but markers, without blocking.
func TestRecoveryDoesNotHangOnPlantedPipe(t *testing.T) {
	needRoot(t)
	const rounds = 9
	run := func(t *testing.T, legacy bool) (hung, locked int) {
		for range rounds {
			ws := workspace(t, false)
			doc := filepath.Join(ws, "a.json")
			writeOwned(t, doc, `{"runs":1}`, 0, 0o664)
			j := journalName(ws)
			evil := filepath.Join(ws, "member") + "/nonexist/../fifo/x"
			asMember(t, ws, `mkdir member && mkfifo member/fifo && printf '%s' "$1" > a.json.txn && printf '%s' "$2" > "$3"`,
				markerOf(t, j, doc, legacy), journalJSON(doc, evil), j)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			h, l, err := hangs(t, ctx, doc, filepath.Join(ws, "member", "fifo"), func() error {
				_, err := Mutate(ctx, doc, bumpRuns)
				return err
			})
			cancel()
			if h {
				hung++
				if l {
					locked++
				}
				continue
			}
			if !legacy && (!errors.Is(err, ErrTxUntrusted) || !errNames(err, j)) {
				t.Fatalf("Mutate = %v, want ErrTxUntrusted naming %s", err, j)
			}
		}
		return hung, locked
	}
	hung, _ := run(t, false)
	useLegacyRecovery(t, nil)
	control, locked := run(t, true)
	t.Logf("planted pipe: %d of %d recoveries hung past ctx; the earlier recovery %d (%d of them holding the lock)", hung, rounds, control, locked)
	if hung > 0 {
		t.Errorf("%d recoveries hung", hung)
	}
	if control == 0 {
		t.Errorf("CONTROL: the earlier recovery never hung: the harness cannot see a hang")
	}
}

// Failure 2: names a member plants make root open a device: a listed
// document's new content or marker that is the member's link to a device,
// and a path whose lexical parent is a device. Each open of the device is counted
// (inotify); the device stands in for /dev/kmsg or /dev/watchdog.
func TestRecoveryOpensNoDevice(t *testing.T) {
	needRoot(t)
	priv := privateDir(t)
	dev := nullDevice(t, priv)
	opens := watchOpens(t, dev)
	shapes := []struct {
		name  string
		plant func(ws string) string // plants, returns the extra path the journal lists
	}{
		{"new content linked to a device", func(ws string) string {
			asMember(t, ws, `mkdir member && ln -s "$1" member/x.json.txn.tmp`, dev)
			return filepath.Join(ws, "member", "x.json")
		}},
		{"lexical parent is a device", func(ws string) string {
			asMember(t, ws, `mkdir member`)
			rel, _ := filepath.Rel(filepath.Join(ws, "member"), dev)
			return filepath.Join(ws, "member") + "/nonexist/../" + rel + "/x"
		}},
		{"listed marker linked to a device", func(ws string) string {
			asMember(t, ws, `mkdir member && ln -s "$1" member/x.json.txn`, dev)
			return filepath.Join(ws, "member", "x.json")
		}},
	}
	run := func(t *testing.T, legacy bool) (opened int) {
		for _, sh := range shapes {
			ws := workspace(t, false)
			doc := filepath.Join(ws, "a.json")
			writeOwned(t, doc, `{"runs":1}`, 0, 0o664)
			j := journalName(ws)
			extra := sh.plant(ws)
			asMember(t, ws, `printf '%s' "$1" > a.json.txn && printf '%s' "$2" > "$3"`, markerOf(t, j, doc, legacy), journalJSON(doc, extra), j)
			opens()
			_, err := Mutate(context.Background(), doc, bumpRuns)
			n := opens()
			opened += n
			t.Logf("%s: %d opens of the device; Mutate: %v", sh.name, n, err)
		}
		return opened
	}
	opened := run(t, false)
	useLegacyRecovery(t, nil)
	control := run(t, true)
	t.Logf("%d planted shapes: the device was opened %d times; by the earlier recovery %d times", len(shapes), opened, control)
	if opened > 0 {
		t.Errorf("recovery opened the device %d times", opened)
	}
	if control == 0 {
		t.Errorf("CONTROL: the earlier recovery never opened the device: the harness cannot see it")
	}
}

// Failure 3: in a sticky directory (1777, like /tmp) the member cannot
// replace root's document, but can plant a marker, a new content and a
// journal. Recovery must not install the member's file: their 0666 file,
// a link, or garbage. The control switches the owner check off (the link,
// which the opening rules refuse whatever the owner, runs against the
// earlier recovery).
func TestRecoveryNoTakeoverInStickyDirectory(t *testing.T) {
	needRoot(t)
	const rounds = 5
	type shape struct {
		name    string
		tmp     string // a shell command as the member creating s.json.txn.tmp
		control func(t *testing.T) bool
	}
	shapes := []shape{
		{"member's file", `printf '{"runs":666}' > s.json.txn.tmp && chmod 666 s.json.txn.tmp`, func(t *testing.T) bool {
			setSeam(t, &txSeams(t).TrustAnyOwner)
			return false
		}},
		{"link to another file", `ln -s "$PWD/../other.json" s.json.txn.tmp`, func(t *testing.T) bool {
			useLegacyRecovery(t, nil)
			return true
		}},
		{"garbage", `printf 'garbage' > s.json.txn.tmp`, func(t *testing.T) bool {
			setSeam(t, &txSeams(t).TrustAnyOwner)
			return false
		}},
	}
	const orig = `{"runs":1}`
	run := func(t *testing.T, sh shape, legacy bool) (escaped int) {
		for range rounds {
			ws := workspace(t, true)
			doc := filepath.Join(ws, "s.json")
			writeOwned(t, doc, orig, 0, 0o644)
			writeOwned(t, filepath.Join(filepath.Dir(ws), "other.json"), `{"runs":666}`, member, 0o644)
			j := journalName(ws)
			asMember(t, ws, sh.tmp+` && printf '%s' "$1" > s.json.txn && printf '%s' "$2" > "$3"`, markerOf(t, j, doc, legacy), journalJSON(doc), j)
			_, err := Mutate(context.Background(), doc, func(*Status) error { return nil })
			fi, lerr := os.Lstat(doc)
			data, _ := os.ReadFile(doc)
			if lerr != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Uid != 0 || fi.Mode().Perm() != 0o644 || string(data) != orig {
				escaped++
				continue
			}
			if !legacy && (!errors.Is(err, ErrTxUntrusted) || !errNames(err, doc+journal.MarkerSuffix)) {
				t.Fatalf("%s: Mutate = %v, want ErrTxUntrusted naming the marker", sh.name, err)
			}
		}
		return escaped
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			escaped := run(t, sh, false)
			legacy := sh.control(t)
			control := run(t, sh, legacy)
			t.Logf("%s: %d of %d rounds installed the member's file; control %d", sh.name, escaped, rounds, control)
			if escaped > 0 {
				t.Errorf("%d takeovers", escaped)
			}
			if control == 0 {
				t.Errorf("CONTROL: no takeover without the protection: the harness cannot see one")
			}
		})
	}
}

// Failure 4: a marker naming a file with a journal's name that is no
// journal, in a directory only root may write (directly, or through the
// member's link to it). The earlier recovery took it for a torn journal
// and removed it.
func TestRecoveryDeletesNothingItCannotTrust(t *testing.T) {
	needRoot(t)
	cases := []string{"root's directory", "through the member's link"}
	run := func(t *testing.T, legacy bool) (deleted int) {
		for _, c := range cases {
			ws := workspace(t, false)
			priv := privateDir(t)
			victim := journalName(priv)
			if err := os.WriteFile(victim, []byte("root's own file\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			doc := filepath.Join(ws, "m.json")
			asMember(t, ws, `printf '{"runs":1}' > m.json`)
			named := victim
			if c == cases[1] {
				asMember(t, ws, `mkdir member && ln -s "$1" member/link`, priv)
				named = journalName(filepath.Join(ws, "member", "link"))
			}
			asMember(t, ws, `printf '%s' "$1" > m.json.txn`, markerOf(t, named, doc, legacy))
			_, err := Mutate(context.Background(), doc, bumpRuns)
			if _, serr := os.Lstat(victim); serr != nil {
				deleted++
				continue
			}
			if !legacy && (!errors.Is(err, ErrTxUntrusted) || !errNames(err, named)) {
				t.Fatalf("%s: Mutate = %v, want ErrTxUntrusted naming %s", c, err, named)
			}
		}
		return deleted
	}
	deleted := run(t, false)
	useLegacyRecovery(t, nil)
	control := run(t, true)
	t.Logf("%d planted markers: %d root-only files deleted; by the earlier recovery %d", len(cases), deleted, control)
	if deleted > 0 {
		t.Errorf("recovery deleted %d files it could not trust", deleted)
	}
	if control == 0 {
		t.Errorf("CONTROL: the earlier recovery deleted nothing: the harness cannot see it")
	}
}

// Failure 9: a planted journal that lists thousands of directories. The
// earlier recovery synced them all under the lock, long after its ctx
// ended; the recovery refuses a journal over its limits before opening
// anything it lists, and within them it checks ctx between the markers it
// reads. Work after ctx ended is counted through each recovery's hook (no
// timing).
func TestRecoveryHonoursContext(t *testing.T) {
	needHooks(t)
	ctx := context.Background()
	plant := func(t *testing.T, n int, markers, legacy bool) (string, []string) {
		dir := t.TempDir()
		doc := filepath.Join(dir, "a.json")
		if err := os.WriteFile(doc, []byte(`{"runs":1}`), 0o644); err != nil {
			t.Fatal(err)
		}
		j := journalName(dir)
		docs := []string{doc}
		for i := range n {
			d := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if markers || legacy { // the earlier recovery syncs them, the current reads their markers
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			docs = append(docs, filepath.Join(d, "x.json"))
			if markers {
				if err := os.WriteFile(docs[i+1]+markerSuffix, []byte(j+"\nnone\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		os.WriteFile(j, []byte(journalJSON(docs...)), 0o644)
		os.WriteFile(doc+markerSuffix, []byte(markerOf(t, j, doc, legacy)), 0o644)
		return doc, docs
	}
	t.Run("over the limits", func(t *testing.T) {
		doc, _ := plant(t, journal.MaxDocuments+1, false, false)
		synced := 0
		txSeams(t).Hook = func(event, name string) {
			if event == "sync" {
				synced++
			}
		}
		t.Cleanup(func() { txSeams(t).Hook = nil })
		_, err := Mutate(ctx, doc, bumpRuns)
		if !errors.Is(err, ErrTxUntrusted) || synced > 0 {
			t.Fatalf("Mutate = %v after %d syncs, want ErrTxUntrusted and none", err, synced)
		}
	})
	// Within the limits: ctx ends at the first marker of another document
	// that recovery reads; how many more it reads is counted.
	const n = 300
	t.Run("ctx between steps", func(t *testing.T) {
		doc, _ := plant(t, n, true, false)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		after := 0
		txSeams(t).Hook = func(event, name string) {
			if event == "open" && strings.HasSuffix(name, "x.json"+markerSuffix) {
				if cctx.Err() != nil {
					after++
				}
				cancel()
			}
		}
		t.Cleanup(func() { txSeams(t).Hook = nil })
		_, err := Mutate(cctx, doc, bumpRuns)
		txSeams(t).Hook = nil
		t.Logf("recovery read %d markers after its ctx ended; Mutate: %v", after, err)
		if !errors.Is(err, context.Canceled) || after > 0 {
			t.Fatalf("Mutate = %v after %d reads past the end of ctx, want context.Canceled and none", err, after)
		}
		// The next locker finishes what was left.
		if _, err := Mutate(ctx, doc, bumpRuns); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("CONTROL earlier recovery", func(t *testing.T) {
		doc, _ := plant(t, n, false, true)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		after := 0
		useLegacyRecovery(t, func(string) {
			if cctx.Err() != nil {
				after++
			}
			cancel()
		})
		_, err := Mutate(cctx, doc, bumpRuns)
		t.Logf("the earlier recovery synced %d files and directories after its ctx ended; Mutate: %v", after, err)
		if after == 0 {
			t.Fatal("CONTROL: the earlier recovery did no work after ctx ended: the harness cannot see it")
		}
	})
}

// The trust rule in both kinds of shared directory. In the documented
// group workspace (setgid, no sticky bit) a member's crashed transaction is
// recovered by root: whoever could create its files there could rename
// over the document directly. A stricter rule (every transaction file owned
// by the document's owner), which the control switches on, would block that
// recovery after any crash of another member's commit. (The sticky case is
// TestRecoveryNoTakeoverInStickyDirectory.)
func TestRecoveryTrustsGroupWorkspace(t *testing.T) {
	needRoot(t)
	run := func(t *testing.T) error {
		ws := workspace(t, false)
		reg, task := txDocs(t, ws)
		seedTx(t, reg, task)
		for _, p := range []string{reg.Name(), task.Name(), filepath.Dir(task.Name())} {
			os.Chown(p, 0, member)
			if p == filepath.Dir(task.Name()) {
				os.Chmod(p, 0o775|os.ModeSetgid)
			} else {
				os.Chmod(p, 0o664)
			}
		}
		killAtAs(t, ws, "committed", "dying", member)
		_, err := checkSpawn(t, ws)
		return err
	}
	if err := run(t); err != nil {
		t.Fatalf("root's recovery of the member's committed transaction: %v", err)
	}
	setSeam(t, &txSeams(t).StrictOwner)
	err := run(t)
	t.Logf("with the stricter owner rule: %v", err)
	if !errors.Is(err, ErrTxUntrusted) {
		t.Fatalf("CONTROL: the stricter rule recovered the member's transaction (%v): it would not block the workspace", err)
	}
}
