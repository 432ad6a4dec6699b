package agentic

import (
	iofs "io/fs"
	"slices"

	"example.com/core"
)

var fs = (&core.Fs{}).NewUnrestricted()

var workspaceRootOverride string

func WorkspaceRoot() string {
	if root := core.Trim(workspaceRootOverride); root != "" {
		return root
	}
	if root := core.Env("CORE_WORKSPACE"); root != "" {
		return core.JoinPath(root, "workspace")
	}
	return core.JoinPath(core.Getenv("HOME"), "Lethean", "workspace")
}

func WorkspaceStatusPaths() []string { return workspaceStatusPaths(WorkspaceRoot()) }

func WorkspaceStatusPath(dir string) string { // want WorkspaceStatusPath:`path 0 example.com/core.Join\("/", \{\$0, "status.json"\}\)`
	return core.JoinPath(dir, "status.json")
}

// WorkspaceName reassigns its variable from a helper of it.
func WorkspaceName(dir string) string {
	name := core.TrimPrefix(dir, WorkspaceRoot())
	name = core.TrimPrefix(name, "/")
	if name == "" {
		return core.PathBase(dir)
	}
	return name
}

func WorkspaceRepoDir(dir string) string { return core.JoinPath(dir, "repo") }

func workspaceBlockedPath(dir string) string {
	return core.JoinPath(WorkspaceRepoDir(dir), "BLOCKED.md")
}

// workspaceStatusPaths walks the tree with a recursive function literal.
func workspaceStatusPaths(root string) []string {
	if root == "" {
		return nil
	}
	var paths []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		r := fs.List(dir)
		if !r.OK {
			return
		}
		if p := core.JoinPath(dir, "status.json"); fs.IsFile(p) && depth == 3 {
			paths = append(paths, p)
			return
		}
		entries, _ := r.Value.([]iofs.DirEntry)
		for _, e := range entries {
			if e.IsDir() {
				walk(core.JoinPath(dir, e.Name()), depth+1)
			}
		}
	}
	walk(root, 0)
	slices.Sort(paths)
	return paths
}
