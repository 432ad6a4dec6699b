// Package logger provides a process-wide default *slog.Logger that is never
// nil.
//
// # Examples
//
// Runnable examples with their output, checked by go test (example_test.go):
// the logger before any setup (ExampleDefault) and installing one's own
// handler, then restoring the previous logger (ExampleSetDefault).
//
// # Guarantees
//
//   - [Default] never returns nil, from the first call in any goroutine. It
//     is built lazily, once ([sync.Once]), as a text handler writing to
//     standard error at the level named by the CORE_LOG_LEVEL environment
//     variable; after that, Default is one atomic load, lock-free.
//   - If building the default panics (or yields nil), a static logger
//     that discards everything is installed by compare-and-swap and
//     Default returns it; the panic does not reach the caller.
//   - SetDefault(nil) is refused with [ErrNilLogger] and changes nothing; so
//     is any logger whose every call would panic (no handler, as in the
//     zero [slog.Logger], or a nil one, as in
//     slog.New((*slog.TextHandler)(nil))), with an error matching
//     ErrNilLogger. [Check] is that test.
//   - The restore function of [SetDefault] puts the previous logger back
//     only if the logger it installed is still the current one, so a stale
//     restore never undoes someone else's SetDefault. It succeeds at most
//     once.
//   - The package starts no goroutines and does not touch the standard
//     log package or [slog.Default]; call slog.SetDefault(logger.Default())
//     yourself if you want that.
//
// # CORE_LOG_LEVEL
//
// Read once, when the default is first built. Accepted values are those of
// slog.Level.UnmarshalText: debug, info, warn, error (case-insensitive),
// optionally with an offset such as "warn+2". Unset, empty or invalid
// values mean info: a bad variable must not stop a service from logging.
//
// # Not guaranteed
//
//   - Restores are not a stack: with interleaved SetDefault calls from
//     several goroutines, the logger left in place is the one whose restore
//     found its own logger current (see SetDefault).
//   - Writes to standard error are not buffered or retried; a slow stderr
//     slows the caller, as with log/slog.
package logger
