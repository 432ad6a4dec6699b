package logger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// EnvLevel names the environment variable that sets the level of the lazily
// built default logger.
const EnvLevel = "CORE_LOG_LEVEL"

// ErrNilLogger matches every error about a logger that cannot log (see
// [Check]); SetDefault(nil) returns it as is.
var ErrNilLogger = errors.New("logger: nil logger")

// unusableError says why a non-nil logger cannot log.
type unusableError string

func (e unusableError) Error() string      { return "logger: " + string(e) }
func (unusableError) Is(target error) bool { return target == ErrNilLogger }

// Check returns nil if l can log, or an error matching [ErrNilLogger] that
// says why not: l is nil, has no handler (the zero [slog.Logger]), or its
// handler is a nil pointer, map, slice, func or channel, as in
// slog.New((*slog.TextHandler)(nil)). Every logging call on such a logger
// panics. [SetDefault] and core.New refuse a logger that Check refuses.
//
// Check looks at l's own handler only: a handler that wraps a nil handler
// is not detected.
func Check(l *slog.Logger) error {
	switch {
	case l == nil:
		return ErrNilLogger
	case l.Handler() == nil:
		return unusableError("no handler (the zero slog.Logger)")
	case nilValue(l.Handler()):
		return unusableError(fmt.Sprintf("nil handler (%T)", l.Handler()))
	}
	return nil
}

// nilValue reports whether h holds a nil pointer, map, slice, func or
// channel: a typed nil, which compares unequal to nil as an interface.
func nilValue(h slog.Handler) bool {
	switch v := reflect.ValueOf(h); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

var (
	current  atomic.Pointer[slog.Logger]
	initOnce sync.Once

	// fallback is what Default returns when building the default failed.
	// It is built at package initialisation from values that cannot fail.
	fallback = slog.New(slog.DiscardHandler)
)

// newDefault builds the default logger.
func newDefault() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: levelFromEnv()}))
}

// levelFromEnv parses CORE_LOG_LEVEL; unset or invalid means info.
func levelFromEnv() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(os.Getenv(EnvLevel))); err != nil {
		return slog.LevelInfo
	}
	return l
}

// Default returns the current default logger. It is never nil.
func Default() *slog.Logger {
	if l := current.Load(); l != nil {
		return l
	}
	return initDefault(newDefault)
}

// initDefault is the slow path of [Default], kept out of it so that Default
// stays small enough to inline.
func initDefault(build func() *slog.Logger) *slog.Logger {
	initOnce.Do(func() {
		// Installed by compare-and-swap in a deferred call so that it also
		// runs when build panics: sync.Once counts a panicking function
		// as done, and without this the default would stay nil forever.
		defer func() {
			_ = recover()
			current.CompareAndSwap(nil, fallback)
		}()
		if l := build(); l != nil {
			current.CompareAndSwap(nil, l)
		}
	})
	if l := current.Load(); l != nil {
		return l
	}
	return fallback // unreachable: the Once above left current non-nil
}

// SetDefault makes l the default logger and returns a function that puts
// the previous one back, only if l is still the default at that time. A
// restore that finds another logger current does nothing (it may be called
// again later); once it has put the previous logger back, further calls do
// nothing. A logger that [Check] refuses (nil, no handler, a nil handler) is
// refused with Check's error, which matches [ErrNilLogger]; SetDefault then
// changes nothing and returns a restore function that does nothing.
func SetDefault(l *slog.Logger) (restore func(), err error) {
	if err := Check(l); err != nil {
		return func() {}, err
	}
	// Build the lazy default first, so that prev is never nil and the lazy
	// initialisation cannot later overwrite l.
	Default()
	prev := current.Swap(l)
	return restorer(&current, l, prev), nil
}

// A swapper holds the current logger: *atomic.Pointer[slog.Logger].
type swapper interface {
	CompareAndSwap(old, new *slog.Logger) (swapped bool)
}

// restorer returns the restore function of [SetDefault]: it swaps prev back
// for l in cur, at most once.
func restorer(cur swapper, l, prev *slog.Logger) func() {
	var done atomic.Bool
	return func() {
		// Claim the one success before acting, so that a concurrent call
		// of this restore cannot act too; give the claim back if l is not
		// current, since a later call may still succeed.
		if !done.CompareAndSwap(false, true) {
			return
		}
		if !cur.CompareAndSwap(l, prev) {
			done.Store(false)
		}
	}
}

// Debug logs at slog.LevelDebug with the current default logger.
func Debug(msg string, args ...any) { emit(slog.LevelDebug, msg, args) }

// Info logs at slog.LevelInfo with the current default logger.
func Info(msg string, args ...any) { emit(slog.LevelInfo, msg, args) }

// Warn logs at slog.LevelWarn with the current default logger.
func Warn(msg string, args ...any) { emit(slog.LevelWarn, msg, args) }

// Error logs at slog.LevelError with the current default logger.
func Error(msg string, args ...any) { emit(slog.LevelError, msg, args) }

// emit builds the record itself, rather than calling Logger.Info, so that
// the source position (with HandlerOptions.AddSource) is the caller of
// [Info], not this package.
func emit(level slog.Level, msg string, args []any) {
	l := Default()
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // skip Callers, emit, and Info/Warn/...
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.Add(args...)
	_ = l.Handler().Handle(ctx, r)
}
