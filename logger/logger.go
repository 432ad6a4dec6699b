package logger

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// EnvLevel names the environment variable that sets the level of the lazily
// built default logger.
const EnvLevel = "CORE_LOG_LEVEL"

// ErrNilLogger is returned by SetDefault(nil). SetDefault of a logger
// without a handler (the zero slog.Logger) returns an error matching it.
var ErrNilLogger = errors.New("logger: SetDefault(nil): a nil logger is not allowed")

// noHandlerError refuses the zero slog.Logger, whose every logging call
// panics: as a default it would be as bad as nil.
type noHandlerError struct{}

func (noHandlerError) Error() string {
	return "logger: SetDefault: a logger without a handler (the zero slog.Logger) is not allowed"
}

func (noHandlerError) Is(target error) bool { return target == ErrNilLogger }

var (
	current  atomic.Pointer[slog.Logger]
	initOnce sync.Once

	// fallback is what Default returns when building the default failed.
	// It is built at package initialisation from values that cannot fail.
	fallback = slog.New(slog.DiscardHandler)

	// newDefault builds the default logger. A variable so that tests can
	// make it panic; nothing else assigns it.
	newDefault = func() *slog.Logger {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: levelFromEnv()}))
	}
)

// afterRestoreSwap, if set (tests only), runs in a restore function right
// after it has put the previous logger back.
var afterRestoreSwap func()

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
	return initDefault()
}

// initDefault is the slow path of Default, kept out of it so that Default
// stays small enough to inline.
func initDefault() *slog.Logger {
	initOnce.Do(func() {
		// Installed by compare-and-swap in a deferred call so that it also
		// runs when newDefault panics: sync.Once counts a panicking function
		// as done, and without this the default would stay nil forever.
		defer func() {
			_ = recover()
			current.CompareAndSwap(nil, fallback)
		}()
		if l := newDefault(); l != nil {
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
// nothing. SetDefault(nil) returns ErrNilLogger, and SetDefault of a
// logger without a handler an error matching it; both return a restore
// function that does nothing, and change nothing.
func SetDefault(l *slog.Logger) (restore func(), err error) {
	if l == nil {
		return func() {}, ErrNilLogger
	}
	if l.Handler() == nil {
		return func() {}, noHandlerError{}
	}
	// Build the lazy default first, so that prev is never nil and the lazy
	// initialisation cannot later overwrite l.
	Default()
	prev := current.Swap(l)
	var done atomic.Bool
	return func() {
		// Claim the one success before acting, so that a concurrent call
		// of this restore cannot act too; give the claim back if l is not
		// current, since a later call may still succeed.
		if !done.CompareAndSwap(false, true) {
			return
		}
		if !current.CompareAndSwap(l, prev) {
			done.Store(false)
			return
		}
		if afterRestoreSwap != nil {
			afterRestoreSwap()
		}
	}, nil
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
// Info, not this package.
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
