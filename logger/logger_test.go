package logger

import (
	"bytes"
	"context"
	"errors"
	"log"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// countHandler counts the records it handles.
type countHandler struct{ n *atomic.Int64 }

func (h countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countHandler) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countHandler) WithGroup(string) slog.Handler      { return h }

func counting() (*slog.Logger, *atomic.Int64) {
	n := new(atomic.Int64)
	return slog.New(countHandler{n}), n
}

// fresh resets the package so that the next Default builds the default
// again, and does so again at the end of the test.
func fresh(t *testing.T) {
	t.Helper()
	t.Cleanup(resetForTest())
}

func TestDefaultIsNeverNilAndStable(t *testing.T) {
	fresh(t)
	var wg sync.WaitGroup
	got := make([]*slog.Logger, 8)
	for i := range got {
		wg.Go(func() { got[i] = Default() })
	}
	wg.Wait()
	for i, l := range got {
		if l == nil || l != got[0] {
			t.Fatalf("Default() #%d = %p, want %p (non-nil, built once)", i, l, got[0])
		}
	}
}

// neverNil is the check the panicking-init tests and their control share:
// first calls from several goroutines, then later calls; none may panic
// or return nil.
func neverNil(get func() *slog.Logger) (nils, panics int64) {
	var n, p atomic.Int64
	call := func() {
		defer func() {
			if recover() != nil {
				p.Add(1)
			}
		}()
		if get() == nil {
			n.Add(1)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(call)
	}
	wg.Wait()
	call()
	return n.Load(), p.Load()
}

// The first calls of Default run initDefault(newDefault); these tests run
// it with a constructor that fails.
func TestPanickingInitFallsBack(t *testing.T) {
	fresh(t)
	builds := 0
	first := func() *slog.Logger {
		return initDefault(func() *slog.Logger { builds++; panic("cannot build logger") })
	}
	if nils, panics := neverNil(first); nils != 0 || panics != 0 {
		t.Fatalf("Default with a panicking init: %d nil results, %d panics", nils, panics)
	}
	if Default() != fallback || builds != 1 {
		t.Fatalf("want the static fallback after one build attempt, got %p after %d", Default(), builds)
	}
	Info("discarded") // must not panic
}

func TestNilInitFallsBack(t *testing.T) {
	fresh(t)
	if initDefault(func() *slog.Logger { return nil }) != fallback || Default() != fallback {
		t.Fatal("a nil default was not replaced by the fallback")
	}
}

// The control: the unguarded lazy pattern (sync.Once, no fallback) under
// the same check shows the bug the guarded Default fixes: the first caller
// panics and every later caller gets nil.
func TestPanickingInitControlIsCaught(t *testing.T) {
	var once sync.Once
	var cur atomic.Pointer[slog.Logger]
	naive := func() *slog.Logger {
		once.Do(func() { cur.Store(func() *slog.Logger { panic("cannot build logger") }()) })
		return cur.Load()
	}
	nils, panics := neverNil(naive)
	if nils == 0 || panics == 0 {
		t.Fatalf("control not caught: %d nil results, %d panics", nils, panics)
	}
}

func TestSetDefaultNil(t *testing.T) {
	before := Default()
	restore, err := SetDefault(nil)
	if !errors.Is(err, ErrNilLogger) {
		t.Fatalf("SetDefault(nil) error = %v", err)
	}
	restore() // a usable no-op
	if Default() != before {
		t.Fatal("SetDefault(nil) changed the default")
	}
}

// The zero slog.Logger has no handler: installed, it would make every
// logging call in the process panic. It is refused like nil.
func TestSetDefaultZeroLogger(t *testing.T) {
	before := Default()
	restore, err := SetDefault(new(slog.Logger))
	if !errors.Is(err, ErrNilLogger) || !strings.Contains(err.Error(), "handler") {
		t.Fatalf("SetDefault(&slog.Logger{}) error = %v, want one matching ErrNilLogger that names the missing handler", err)
	}
	restore()
	if Default() != before {
		t.Fatal("SetDefault(&slog.Logger{}) changed the default")
	}
	Info("still logs") // must not panic
}

func TestSetDefaultBeforeFirstUse(t *testing.T) {
	fresh(t)
	l, _ := counting()
	restore, err := SetDefault(l)
	if err != nil || Default() != l {
		t.Fatalf("SetDefault before Default: %v", err)
	}
	restore()
	if d := Default(); d == nil || d == l {
		t.Fatal("restore did not put back the lazily built default")
	}
}

func TestRestoreOnlyIfStillCurrent(t *testing.T) {
	orig := Default()
	a, _ := counting()
	b, _ := counting()
	restoreA, _ := SetDefault(a)
	restoreB, _ := SetDefault(b)
	restoreA() // stale: b is current, nothing happens
	if Default() != b {
		t.Fatal("a stale restore replaced someone else's logger")
	}
	restoreB()
	if Default() != a {
		t.Fatal("restoreB did not put back a")
	}
	restoreA()
	if Default() != orig {
		t.Fatal("restoreA did not put back the original")
	}
	restoreB() // acts at most once: must not reinstall a
	if Default() != orig {
		t.Fatal("a second restore acted")
	}
}

// hookedSwapper runs after once, right after a successful swap.
type hookedSwapper struct {
	p     *atomic.Pointer[slog.Logger]
	after func()
}

func (h *hookedSwapper) CompareAndSwap(old, new *slog.Logger) bool {
	ok := h.p.CompareAndSwap(old, new)
	if after := h.after; ok && after != nil {
		h.after = nil
		after()
	}
	return ok
}

// restoreCalledAgain installs l in a slot of its own, restores with the
// restore function mk builds, and, while that first call is still under
// way (right after its swap), installs l again and calls the same restore
// from another goroutine. It returns whether l is current at the end: it
// must be, as a restore acts at most once.
func restoreCalledAgain(mk func(cur swapper, l, prev *slog.Logger) func()) bool {
	var slot atomic.Pointer[slog.Logger]
	prev, _ := counting()
	l, _ := counting()
	slot.Store(l)
	h := &hookedSwapper{p: &slot}
	restore := mk(h, l, prev)
	h.after = func() {
		slot.Store(l) // l is current again
		done := make(chan struct{})
		go func() { restore(); close(done) }() // the same restore, concurrently
		<-done
	}
	restore()
	return slot.Load() == l
}

// A restore acts at most once even when it is called again while its
// first call is still under way and, meanwhile, the same logger has been
// installed again: the second call must not put the previous logger back
// a second time (undoing the re-installation).
func TestRestoreAtMostOnceWhenCalledConcurrently(t *testing.T) {
	if !restoreCalledAgain(restorer) {
		t.Fatal("a second call of one restore acted, undoing the re-installation")
	}
}

// The control: a restore that records its success only after acting, run
// the same way, acts twice.
func TestRestoreAtMostOnceControlIsCaught(t *testing.T) {
	markAfter := func(cur swapper, l, prev *slog.Logger) func() {
		var done atomic.Bool
		return func() {
			if !done.Load() && cur.CompareAndSwap(l, prev) {
				done.Store(true)
			}
		}
	}
	if restoreCalledAgain(markAfter) {
		t.Fatal("control not caught: the late-marking restore acted once")
	}
}

// Concurrent Default, SetDefault, restore and logging: no nil, no panic,
// and every record reaches exactly one of the installed handlers.
func TestConcurrentSetDefaultAndLogging(t *testing.T) {
	fresh(t) // restores are not a stack: start and end clean
	base, baseN := counting()
	undo, err := SetDefault(base)
	if err != nil {
		t.Fatal(err)
	}
	defer undo()
	const swappers, loggers, rounds = 4, 4, 500
	var counts []*atomic.Int64
	counts = append(counts, baseN)
	var mu sync.Mutex
	var logged atomic.Int64
	var wg sync.WaitGroup
	for range swappers {
		wg.Go(func() {
			for range rounds {
				l, n := counting()
				mu.Lock()
				counts = append(counts, n)
				mu.Unlock()
				restore, err := SetDefault(l)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := SetDefault(nil); err == nil {
					t.Error("SetDefault(nil) accepted")
				}
				restore()
			}
		})
	}
	for i := range loggers {
		wg.Go(func() {
			for j := range rounds {
				if Default() == nil {
					t.Error("Default() = nil")
					return
				}
				switch j % 4 {
				case 0:
					Debug("d", "i", i)
				case 1:
					Info("i", "i", i)
				case 2:
					Warn("w", "i", i)
				default:
					Error("e", "i", i)
				}
				logged.Add(1)
			}
		})
	}
	wg.Wait()
	var total int64
	for _, n := range counts {
		total += n.Load()
	}
	if total != logged.Load() {
		t.Fatalf("handlers saw %d records, %d were logged", total, logged.Load())
	}
}

func TestHelpersReportCallerAndLevel(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	h := slog.NewTextHandler(&lockedWriter{&mu, &buf}, &slog.HandlerOptions{AddSource: true, Level: slog.LevelInfo})
	restore, _ := SetDefault(slog.New(h))
	defer restore()
	Debug("hidden")
	Info("shown", "k", 1)
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, "msg=shown k=1") {
		t.Fatalf("output: %q", out)
	}
	if !strings.Contains(out, "logger_test.go:") {
		t.Fatalf("source is not the caller: %q", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func TestLevelFromEnv(t *testing.T) {
	for env, want := range map[string]slog.Level{
		"": slog.LevelInfo, "debug": slog.LevelDebug, "WARN": slog.LevelWarn, "error": slog.LevelError,
		"warn+2": slog.LevelWarn + 2, "verbose": slog.LevelInfo, "1": slog.LevelInfo,
	} {
		t.Setenv(EnvLevel, env)
		if got := levelFromEnv(); got != want {
			t.Errorf("%s=%q: level %v, want %v", EnvLevel, env, got, want)
		}
	}
	t.Setenv(EnvLevel, "error")
	fresh(t)
	if Default().Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("the lazily built default ignores CORE_LOG_LEVEL")
	}
}

// The package must not touch the standard defaults.
func TestNoSideEffectsOnStandardDefaults(t *testing.T) {
	stdSlog, stdLog := slog.Default(), log.Writer()
	fresh(t)
	Default()
	restore, _ := SetDefault(slog.New(slog.DiscardHandler))
	restore()
	if slog.Default() != stdSlog || log.Writer() != stdLog {
		t.Fatal("slog.Default or log's writer changed")
	}
}
