package logger_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/agentstate/core/logger"
)

func ExampleDefault() {
	l := logger.Default() // never nil, even before any setup
	fmt.Println(l != nil)
	// Output: true
}

func ExampleSetDefault() {
	h := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // deterministic output
			}
			return a
		},
	})
	restore, err := logger.SetDefault(slog.New(h))
	if err != nil {
		panic(err)
	}
	defer restore()

	logger.Info("agent started", "task", "issue-4")

	_, err = logger.SetDefault(nil)
	fmt.Println(err)
	// Output:
	// level=INFO msg="agent started" task=issue-4
	// logger: nil logger
}
