// Package parsers edits files through parsers that build their result
// from scanned text (git-todo-parser's todo.Parse returns []todo.Todo),
// rather than filling memory they are given: a read, a change and a
// write-back of the same path is a read-modify-write. Text rewrites and
// one-value files are not documents, and are not reported.
package parsers

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/stefanhaller/git-todo-parser/todo"
)

func readTodos(path string) ([]todo.Todo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	todos, err := todo.Parse(f, '#')
	f.Close()
	return todos, err
}

func writeTodos(path string, todos []todo.Todo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = todo.Write(f, todos, '#')
	f.Close()
	return err
}

// dropCommit is the shape of an editor of git-rebase-todo: parse, change,
// write back to the same path through helpers.
func dropCommit(path, hash string) error {
	todos, err := readTodos(path)
	if err != nil {
		return err
	}
	for i := range todos {
		if todos[i].Commit == hash {
			todos[i].Command = todo.Drop
		}
	}
	return writeTodos(path, todos) // want `read-modify-write of path without a lock`
}

// The same, inline, with the whole file read first.
func moveUp(path string, i int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	todos, err := todo.Parse(bytes.NewBuffer(data), '#')
	if err != nil || i == 0 {
		return err
	}
	todos[i], todos[i-1] = todos[i-1], todos[i]
	var buf bytes.Buffer
	if err := todo.Write(&buf, todos, '#'); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644) // want `read-modify-write of path without a lock`
}

type entry struct{ key, value string }

// parseEntries is a parser of this program's own: a map built from the
// lines of what it is given.
func parseEntries(f *os.File) map[string]entry {
	out := make(map[string]entry)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		out[k] = entry{k, v}
	}
	return out
}

func setEntry(path, k, v string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	m := parseEntries(f)
	f.Close()
	m[k] = entry{k, v}
	var b strings.Builder
	for _, e := range m {
		b.WriteString(e.key + "=" + e.value + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644) // want `read-modify-write of path without a lock`
}

// Controls, not reported.

// A text rewrite: the raw content, changed with strings operations and
// written back.
func renameBranch(path, from, to string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(l, from, to)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}

// A one-value file: a pid read with strconv.Atoi and written back.
func bumpPid(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strconv.Itoa(pid+1)), 0o644)
}

// A parse under flock(2) on the file's descriptor, held until the write.
func dropCommitLocked(path, hash string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	todos, err := todo.Parse(f, '#')
	if err != nil {
		return err
	}
	for i := range todos {
		if todos[i].Commit == hash {
			todos[i].Command = todo.Drop
		}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	return todo.Write(f, todos, '#')
}
