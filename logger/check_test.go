package logger

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// handlerFunc and handlerMap are handler types whose nil values compile
// and panic on use, like a nil *slog.TextHandler.
type handlerFunc func(context.Context, slog.Record) error

func (f handlerFunc) Enabled(context.Context, slog.Level) bool        { return true }
func (f handlerFunc) Handle(ctx context.Context, r slog.Record) error { return f(ctx, r) }
func (f handlerFunc) WithAttrs([]slog.Attr) slog.Handler              { return f }
func (f handlerFunc) WithGroup(string) slog.Handler                   { return f }

type handlerMap map[string]int

func (m handlerMap) Enabled(context.Context, slog.Level) bool { return true }
func (m handlerMap) Handle(context.Context, slog.Record) error {
	m["records"]++ // a nil map panics here
	return nil
}
func (m handlerMap) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m handlerMap) WithGroup(string) slog.Handler      { return m }

// unusable lists loggers whose every logging call panics.
func unusable() map[string]*slog.Logger {
	return map[string]*slog.Logger{
		"nil":              nil,
		"zero slog.Logger": new(slog.Logger),
		"nil *TextHandler": slog.New((*slog.TextHandler)(nil)),
		"nil *JSONHandler": slog.New((*slog.JSONHandler)(nil)),
		"nil func handler": slog.New(handlerFunc(nil)),
		"nil map handler":  slog.New(handlerMap(nil)),
	}
}

// panics reports whether one Info call on l panics.
func panics(l *slog.Logger) (p bool) {
	defer func() { p = recover() != nil }()
	l.Info("probe")
	return false
}

// The control: each of these loggers really does panic when used, so a
// default that accepted them would crash every later log call.
func TestUnusableLoggersPanicControl(t *testing.T) {
	for name, l := range unusable() {
		if !panics(l) {
			t.Errorf("%s: logging did not panic; the refusal below proves nothing for it", name)
		}
	}
}

func TestCheckAndSetDefaultRefuseUnusableLoggers(t *testing.T) {
	before := Default()
	for name, l := range unusable() {
		err := Check(l)
		if !errors.Is(err, ErrNilLogger) {
			t.Errorf("Check(%s) = %v, want an error matching ErrNilLogger", name, err)
			continue
		}
		if l != nil && !strings.Contains(err.Error(), "handler") {
			t.Errorf("Check(%s) = %q, want it to name the handler", name, err)
		}
		restore, serr := SetDefault(l)
		if serr == nil || serr.Error() != err.Error() {
			t.Errorf("SetDefault(%s) = %v, want Check's error %v", name, serr, err)
		}
		restore() // a usable no-op
		if Default() != before {
			t.Fatalf("SetDefault(%s) changed the default", name)
		}
		Info("still logs") // must not panic
	}
}

func TestCheckAcceptsUsableLoggers(t *testing.T) {
	live := handlerMap{}
	for name, l := range map[string]*slog.Logger{
		"discard":     slog.New(slog.DiscardHandler),
		"text":        slog.New(slog.NewTextHandler(new(strings.Builder), nil)),
		"non-nil map": slog.New(live),
		"default":     Default(),
	} {
		if err := Check(l); err != nil {
			t.Errorf("Check(%s) = %v", name, err)
		}
	}
	if err := Check(slog.New((*slog.TextHandler)(nil))); !strings.Contains(err.Error(), "*slog.TextHandler") {
		t.Errorf("the error does not name the handler type: %v", err)
	}
}
