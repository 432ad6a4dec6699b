// Package core ties the module's packages together for an agent service: a
// [Core] holds the workspace root (as a sandboxed [fs.Fs]), the configuration,
// the logger, named in-process locks and the service's background tasks.
//
//	c, err := core.New("/var/lib/agents")
//	...
//	c.Go("queue-drain", drainLoop) // stopped by Shutdown
//	ws, err := c.Status("acme", "api", "fix-42") // *status.Store[status.Status]
//	st, err := ws.Mutate(ctx, func(s *status.Status) error { ... })
//	...
//	err = c.Shutdown(ctx)
//
// # Examples
//
// Runnable examples with their output, checked by go test (example_test.go):
// a service's life from [New] to Shutdown with a workspace and a background
// task (Example); one mutex per name (ExampleCore_Lock); a Shutdown that
// times out on a stuck task and is called again (ExampleCore_Shutdown);
// two spawners racing to claim a task (ExampleCore_Status).
//
// # Guaranteed
//
//   - Lock(name) returns one *sync.Mutex per name for the life of the Core,
//     created by an atomic get-or-create: first callers racing for a new name
//     all get the same mutex.
//   - Go registers a task before its goroutine starts, so Shutdown always waits
//     for every task that Go accepted. Shutdown cancels every task's context and
//     waits; if its own context ends first it returns a *ShutdownError naming
//     the tasks still running (errors.Is(err, [context.DeadlineExceeded]) holds),
//     leaves Fs open for them, and may be called again. After Shutdown has
//     begun, Go starts nothing and returns an error wrapping [ErrClosed].
//   - A panic in a task does not crash the process: it is recovered, logged at
//     level Error with its stack, and returned by Shutdown as a *PanicError.
//     A task that calls [runtime.Goexit] simply ends.
//   - Log and Config never return nil. New starts no goroutine; Shutdown
//     leaves none of the Core's behind once it returns nil.
//   - Bad arguments are errors, not panics: a nil [Option] is skipped, an
//     empty root ([os.ErrInvalid]), a missing one ([os.ErrNotExist]; see
//     [New]) or a logger that cannot log (logger.Check) makes New fail, and a nil context makes Shutdown or Workspaces return
//     an error matching os.ErrInvalid without doing anything.
//   - Status and StatusPath only reach documents of the form <root>/<org>/<repo>/<task>/
//     status.json with each element a single, non-empty, local path element;
//     ".." is refused with an error matching [fs.ErrOutsideRoot], other bad
//     elements with [fs.ErrInvalidName], and an existing workspace directory
//     that resolves outside the root through a symbolic link with
//     fs.ErrOutsideRoot.
//
// # Not guaranteed
//
//   - Lock excludes goroutines of this process using the same Core, nothing
//     more. Status documents are shared with other processes: change them
//     with [status.Mutate], which takes the cross-process lock.
//   - Mutexes handed out by Lock are never freed; use names from a bounded set.
//   - Shutdown cannot stop a task that ignores its context; it can only report
//     it. Work a panicking task left half done is not undone.
//   - Once [Core.Shutdown] has cancelled a task's context, every call the
//     task makes with it fails at once: [status.Mutate] too, even when nobody
//     holds the document's lock. A task's last write (marking its work
//     completed or requeued) uses a context made with [context.WithoutCancel]
//     and a timeout instead.
//   - StatusPath checks symbolic links when it is called; a link swapped into
//     the workspace path afterwards is not detected, because the status package
//     works on host paths, not through Fs. Workspaces do not follow links.
//   - Workspaces is a snapshot: workspaces created or removed while it runs
//     may or may not be listed.
package core
