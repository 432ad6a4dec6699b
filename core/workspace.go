package core

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

// StatusFile is the name of a workspace's status document.
const StatusFile = "status.json"

// A Workspace names one agent workspace: the directory
// <root>/<Org>/<Repo>/<Task>.
type Workspace struct {
	Org, Repo, Task string
}

// String returns "org/repo/task", the workspace's name relative to the root.
func (w Workspace) String() string { return path.Join(w.Org, w.Repo, w.Task) }

// StatusPath returns the host path of the status document of workspace
// org/repo/task: <root>/<org>/<repo>/<task>/status.json, for [status.Mutate] and
// [status.Load]:
//
//	p, err := c.StatusPath("acme", "api", "fix-42")
//	st, err := status.Mutate(ctx, p, func(s *status.Status) error { ... })
//
// Each element must be a single, non-empty path element: no "/" or "\", not
// "." or "..", no NUL (and, on Windows, not a reserved name). The org is
// required too, so that every workspace sits at the same depth and Workspaces
// can find it. A malformed element gives an error matching [fs.ErrInvalidName],
// ".." one matching [fs.ErrOutsideRoot]. If the workspace directory exists but
// resolves outside the root through a symbolic link, the error matches
// fs.ErrOutsideRoot. The workspace directory need not exist yet; create it
// with c.Fs().MkdirAll(w.String(), 0o755).
func (c *Core) StatusPath(org, repo, task string) (string, error) {
	w := Workspace{org, repo, task}
	if err := w.validate(); err != nil {
		return "", err
	}
	// The status package works on host paths, outside the Fs sandbox; make
	// sure the directory, if it exists, does not lead out of the root. (A
	// link swapped in after this check is not caught: see the package doc.)
	if _, err := c.fs.Stat(w.String()); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		if errors.Is(err, fs.ErrOutsideRoot) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // it names the workspace too
			}
			return "", fmt.Errorf("core: workspace %s: %w", w, err)
		}
		// Other errors (permissions...) surface when the file is used.
	}
	return filepath.Join(c.root, org, repo, task, StatusFile), nil
}

// Status returns the status Store (not a Status value: call its Load or
// Mutate) of the workspace <root>/<org>/<repo>/<task>, with the same
// validation as StatusPath. Every Mutate through it takes the
// document's cross-process lock and sets updated_at when it changes anything,
// exactly like [status.Mutate] on the same path:
//
//	ws, err := c.Status("acme", "api", "fix-42")
//	st, err := ws.Mutate(ctx, status.Transition(status.Running, status.Queued))
func (c *Core) Status(org, repo, task string, opts ...status.Option) (*status.Store[status.Status], error) {
	p, err := c.StatusPath(org, repo, task)
	if err != nil {
		return nil, err
	}
	return status.NewStore[status.Status](p, opts...), nil
}

func (w Workspace) validate() error {
	for _, f := range []struct{ field, v string }{{"org", w.Org}, {"repo", w.Repo}, {"task", w.Task}} {
		var cause error
		switch {
		case f.v == "..":
			cause = fs.ErrOutsideRoot
		case f.v == "", f.v == ".", strings.ContainsAny(f.v, "/\\\x00"), !filepath.IsLocal(f.v):
			cause = fs.ErrInvalidName
		}
		if cause != nil {
			return fmt.Errorf("core: workspace %q/%q/%q: %s: %w", w.Org, w.Repo, w.Task, f.field, cause)
		}
	}
	return nil
}

// Workspaces lists the workspaces under the root that have a status document,
// sorted by org, repo and task. Symbolic links and entries whose names
// StatusPath would refuse are skipped. ctx is checked between directories;
// a nil ctx is an error matching [os.ErrInvalid].
func (c *Core) Workspaces(ctx context.Context) ([]Workspace, error) {
	if ctx == nil {
		return nil, fmt.Errorf("core: workspaces: %w", errNilContext)
	}
	var out []Workspace
	orgs, err := c.subdirs(ctx, ".")
	if err != nil {
		return nil, err
	}
	for _, org := range orgs {
		repos, err := c.subdirs(ctx, org)
		if err != nil {
			return nil, err
		}
		for _, repo := range repos {
			tasks, err := c.subdirs(ctx, path.Join(org, repo))
			if err != nil {
				return nil, err
			}
			for _, task := range tasks {
				w := Workspace{org, repo, task}
				fi, err := c.fs.Stat(path.Join(w.String(), StatusFile))
				if errors.Is(err, iofs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("core: workspaces: %w", err)
				}
				if fi.Mode().IsRegular() {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

// subdirs returns the names of the real directories (not links) in dir,
// sorted, that are valid workspace elements.
func (c *Core) subdirs(ctx context.Context, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("core: workspaces: %w", err)
	}
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		// A directory removed while we list it is simply not a workspace.
		if dir != "." && errors.Is(err, iofs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("core: workspaces: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() { // IsDir is false for a symbolic link
			continue
		}
		if (Workspace{e.Name(), e.Name(), e.Name()}).validate() == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
