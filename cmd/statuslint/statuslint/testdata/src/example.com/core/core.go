// Package core is a stand-in for the agent framework that the services
// are built on, written the way the framework is: a file-system wrapper
// whose methods return a Result, JSON helpers that work on strings, and a
// path joiner. Its bodies do real I/O, so that statuslint learns what each
// function does from its body (facts), not from its name.
package core

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
)

// Result is the framework's return type: Value holds the value (a string
// for file content) or the error, OK says which.
type Result struct {
	Value any
	OK    bool
}

func Ok(v any) Result       { return Result{Value: v, OK: true} }
func Fail(err error) Result { return Result{Value: err} }

// Fs is the framework's file-system wrapper.
type Fs struct{ root string }

func NewFs(root string) *Fs { return &Fs{root: root} }

func (m *Fs) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(m.root, p)
}

// Read returns the content of the file at p as a string.
func (m *Fs) Read(p string) Result { // want Read:`reads \$recv\.path\(\$0\) into result 0`
	data, err := os.ReadFile(m.path(p))
	if err != nil {
		return Fail(err)
	}
	return Ok(string(data))
}

// Write writes in place (os.WriteFile), like the framework's first version.
func (m *Fs) Write(p, content string) Result { // want Write:`writes \$recv\.path\(\$0\)`
	if err := os.WriteFile(m.path(p), []byte(content), 0o644); err != nil {
		return Fail(err)
	}
	return Ok(nil)
}

// WriteAtomic writes a temp file and renames it over p, creating missing
// parent directories.
func (m *Fs) WriteAtomic(p, content string) Result { // want WriteAtomic:`writes \$recv\.path\(\$0\)`
	full := m.path(p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return Fail(err)
	}
	tmp := full + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return Fail(err)
	}
	if err := os.Rename(tmp, full); err != nil {
		return Fail(err)
	}
	return Ok(nil)
}

func (m *Fs) Exists(p string) bool {
	_, err := os.Stat(m.path(p))
	return !errors.Is(err, os.ErrNotExist)
}

func JSONMarshalString(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(data)
}

func JSONUnmarshalString(s string, v any) Result { // want JSONUnmarshalString:`decodes \$0 into result 0; decodes \$0 into \$1`
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return Fail(err)
	}
	return Ok(v)
}

// Path joins path elements.
func Path(elem ...string) string { return filepath.Join(elem...) }
