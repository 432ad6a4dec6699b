package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentstate/core/config"
	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/logger"
)

// A Core holds what an agent service shares between its parts: the sandboxed
// workspace root, the configuration, the logger, named in-process locks and
// the background tasks it must stop before exiting. Create it with [New] and
// end it with Shutdown. A Core is safe for concurrent use.
type Core struct {
	root string
	fs   *fs.Fs
	cfg  *config.Config
	log  *slog.Logger

	locks lockTable
	tasks *taskGroup

	closeOnce sync.Once
	closeErr  error
}

// An Option configures [New].
type Option func(*options)

type options struct {
	log *slog.Logger
	cfg *config.Config
}

// WithLogger sets the logger returned by Log. nil, like no option, means
// logger.Default(). A logger that cannot log (see [logger.Check]: no
// handler, or a nil one) makes [New] fail.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithConfig sets the configuration returned by Config. nil, like no option,
// means a new empty config.New().
func WithConfig(c *config.Config) Option {
	return func(o *options) { o.cfg = c }
}

// errNoRoot is returned, wrapped, by [New] for an empty root.
var errNoRoot = fmt.Errorf("%w: empty workspace root", os.ErrInvalid)

// errNilContext is returned, wrapped, for a nil context.
var errNilContext = fmt.Errorf("%w: nil context", os.ErrInvalid)

// New returns a [Core] for the workspace root: the existing directory that
// holds <org>/<repo>/<task>/status.json and that Fs is confined to. A
// relative root is made absolute once, here, so a later os.Chdir does not
// move it. There is no default root: falling back to the working directory
// would silently turn wherever a service happens to start (/ for many
// daemons) into its sandbox. For the same reason New does not create the
// root: a root that does not exist is an error matching [os.ErrNotExist]
// (a misspelt path would otherwise become a new, empty workspace), and one
// that is not a directory is an error too; a service that owns its root
// creates it first (os.MkdirAll).
func New(root string, opts ...Option) (*Core, error) {
	var o options
	for _, opt := range opts {
		if opt != nil { // an optional setting left unset
			opt(&o)
		}
	}
	if root == "" {
		return nil, fmt.Errorf("core: new: %w", errNoRoot)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("core: new %s: %w", root, err)
	}
	fsys, err := fs.New(abs)
	if err != nil {
		return nil, fmt.Errorf("core: new: %w", err)
	}
	if o.log == nil {
		o.log = logger.Default()
	} else if err := logger.Check(o.log); err != nil {
		// Every call on it panics, including the one that logs a
		// recovered task panic: that would crash the process.
		return nil, fmt.Errorf("core: new: %w", err)
	}
	if o.cfg == nil {
		o.cfg = config.New()
	}
	return &Core{
		root:  abs,
		fs:    fsys,
		cfg:   o.cfg,
		log:   o.log,
		tasks: newTaskGroup(o.log),
	}, nil
}

// Root returns the absolute path of the workspace root.
func (c *Core) Root() string { return c.root }

// Fs returns the file system confined to the workspace root. Names passed to
// it are slash-separated and relative to Root. It is closed by a successful
// Shutdown.
func (c *Core) Fs() *fs.Fs { return c.fs }

// Config returns the configuration. It is never nil.
func (c *Core) Config() *config.Config { return c.cfg }

// Log returns the logger. It is never nil.
func (c *Core) Log() *slog.Logger { return c.log }

// Shutdown stops the [Core]: Go starts nothing more, the context of every task
// is cancelled, and Shutdown waits for all of them to return.
//
// If ctx ends first, Shutdown returns a *ShutdownError naming the tasks still
// running (errors.Is(err, [context.DeadlineExceeded]) holds for a deadline) and
// leaves Fs open, since those tasks may still use it; call Shutdown again to
// keep waiting. Once every task has returned, Shutdown closes Fs and returns
// nil, or the *PanicError of each task that panicked joined with any error
// from closing Fs. Calling it again after that returns the same result.
//
// Shutdown waits for every task, including one that calls it: a task must
// pass its own context (or one derived from it), which this Shutdown
// cancels, so that the call returns at once with a *ShutdownError naming
// the caller (errors.Is(err, [context.Canceled])); the owner's Shutdown then
// waits for the rest and closes Fs. A task calling Shutdown with a context
// that does not end waits for itself forever. A nil ctx is an error
// matching [os.ErrInvalid], and nothing is stopped.
func (c *Core) Shutdown(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("core: shutdown: %w", errNilContext)
	}
	allDone, err := c.tasks.stop(ctx)
	if !allDone {
		return err // tasks may still use Fs: keep it open
	}
	c.closeOnce.Do(func() {
		if cerr := c.fs.Close(); cerr != nil {
			c.closeErr = fmt.Errorf("core: shutdown: close fs: %w", cerr)
		}
	})
	return errors.Join(err, c.closeErr)
}
