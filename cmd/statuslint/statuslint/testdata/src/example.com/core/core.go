// Package core stands in for the framework the agent services are built
// on (dappco.re/go). Its functions have the framework's signatures and the
// shapes of its bodies: every file operation goes through a small wrapper
// that returns a Result (Value holds the value or the error, OK says
// which), paths are checked against a sandbox root in a loop, WriteAtomic
// writes a temp file named with a random suffix and renames it through the
// Rename wrapper, Result.New adapts (value, error) pairs variadically, and
// path helpers reassign their parameters (p = TrimSuffix(p, ds)). The
// bodies do real I/O, so that statuslint learns what each function does
// from its body (facts), never from its name.
package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Result is the framework's return type.
type Result struct {
	Value any
	OK    bool
}

// New adapts (value, error) pairs into a Result.
func (r Result) New(args ...any) Result {
	if len(args) == 0 {
		return r
	}
	if len(args) > 1 {
		if err, ok := args[len(args)-1].(error); ok {
			if err != nil {
				return Result{Value: err, OK: false}
			}
			r.Value = args[0]
			r.OK = true
			return r
		}
	}
	r.Value = args[0]
	if err, ok := r.Value.(error); ok {
		if err != nil {
			return Result{Value: err, OK: false}
		}
		return Result{OK: true}
	}
	r.OK = true
	return r
}

func Ok(v any) Result       { return Result{Value: v, OK: true} }
func Fail(err error) Result { return Result{Value: err, OK: false} }

func ResultOf(v any, err error) Result {
	if err != nil {
		return Result{Value: err, OK: false}
	}
	return Result{Value: v, OK: true}
}

func (r Result) Error() string {
	if r.OK {
		return ""
	}
	if err, ok := r.Value.(error); ok {
		return err.Error()
	}
	return "unknown error"
}

// E makes an error that names the operation.
func E(op, msg string, err error) error {
	if err == nil {
		return errors.New(op + ": " + msg)
	}
	return errors.New(op + ": " + msg + ": " + err.Error())
}

func Warn(msg string, keyvals ...any) {}

type FileMode = fs.FileMode

// Strings.

func Concat(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p)
	}
	return b.String()
}

func Join(sep string, parts ...string) string {
	if len(parts) == 0 {
		return ""
	}
	result := parts[0]
	for _, p := range parts[1:] {
		result = Concat(result, sep, p)
	}
	return result
}

func Split(s, sep string) []string           { return strings.Split(s, sep) }
func SplitN(s, sep string, n int) []string   { return strings.SplitN(s, sep, n) }
func TrimSuffix(s, suffix string) string     { return strings.TrimSuffix(s, suffix) }
func TrimPrefix(s, prefix string) string     { return strings.TrimPrefix(s, prefix) }
func HasPrefix(s, prefix string) bool        { return strings.HasPrefix(s, prefix) }
func Contains(s, substr string) bool         { return strings.Contains(s, substr) }
func Trim(s string) string                   { return strings.TrimSpace(s) }
func Lower(s string) string                  { return strings.ToLower(s) }
func Sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

var systemInfo = struct{ values map[string]string }{values: map[string]string{"DS": string(filepath.Separator)}}

func Getenv(key string) string { return os.Getenv(key) }

func Env(key string) string {
	if v := systemInfo.values[key]; v != "" {
		return v
	}
	return Getenv(key)
}

// Paths.

// Path builds a clean absolute path: relative paths are anchored to the
// home directory.
func Path(segments ...string) string {
	ds := Env("DS")
	home := Env("DIR_HOME")
	if home == "" {
		home = "."
	}
	if len(segments) == 0 {
		return home
	}
	p := Join(ds, segments...)
	if PathIsAbs(p) {
		return CleanPath(p, ds)
	}
	return CleanPath(home+ds+p, ds)
}

func PathJoin(segments ...string) string { return filepath.Join(segments...) }

func JoinPath(segments ...string) string { return Join("/", segments...) }

func PathIsAbs(p string) bool { return p != "" && p[0] == '/' }

func PathBase(p string) string {
	if p == "" {
		return "."
	}
	ds := Env("DS")
	p = TrimSuffix(p, ds)
	if p == "" {
		return ds
	}
	parts := Split(p, ds)
	return parts[len(parts)-1]
}

func PathDir(p string) string {
	if p == "" {
		return "."
	}
	ds := Env("DS")
	i := strings.LastIndex(p, ds)
	if i < 0 {
		return "."
	}
	dir := p[:i]
	if dir == "" {
		return ds
	}
	return dir
}

// CleanPath resolves . and .. elements.
func CleanPath(p, ds string) string {
	if p == "" {
		return "."
	}
	rooted := HasPrefix(p, ds)
	var clean []string
	for _, part := range Split(p, ds) {
		switch part {
		case "", ".":
			continue
		case "..":
			if len(clean) > 0 && clean[len(clean)-1] != ".." {
				clean = clean[:len(clean)-1]
			} else if !rooted {
				clean = append(clean, "..")
			}
		default:
			clean = append(clean, part)
		}
	}
	result := Join(ds, clean...)
	if rooted {
		result = ds + result
	}
	if result == "" {
		return "."
	}
	return result
}

func PathGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

func PathEvalSymlinks(p string) Result   { return Result{}.New(filepath.EvalSymlinks(p)) }
func PathRel(base, target string) Result { return Result{}.New(filepath.Rel(base, target)) }
func Getwd() Result                      { return Result{}.New(os.Getwd()) }

// The operating system, as Results.

func ReadFile(p string) Result {
	data, err := os.ReadFile(p)
	if err != nil {
		return Result{err, false}
	}
	return Result{data, true}
}

func WriteFile(p string, data []byte, mode FileMode) Result {
	if err := os.WriteFile(p, data, mode); err != nil {
		return Result{err, false}
	}
	return Result{OK: true}
}

func MkdirAll(p string, mode FileMode) Result {
	if err := os.MkdirAll(p, mode); err != nil {
		return Result{err, false}
	}
	return Result{OK: true}
}

func Rename(oldPath, newPath string) Result {
	if err := os.Rename(oldPath, newPath); err != nil {
		return Result{err, false}
	}
	return Result{OK: true}
}

func Remove(p string) Result {
	if err := os.Remove(p); err != nil {
		return Result{err, false}
	}
	return Result{OK: true}
}

func Stat(p string) Result { return Result{}.New(os.Stat(p)) }
func Open(p string) Result { return Result{}.New(os.Open(p)) }
func OpenFile(p string, flag int, mode FileMode) Result {
	return Result{}.New(os.OpenFile(p, flag, mode))
}
func ReadDir(fsys fs.FS, name string) Result { return Result{}.New(fs.ReadDir(fsys, name)) }
func DirFS(dir string) fs.FS                 { return os.DirFS(dir) }
func shortRand() string                      { return strconv.FormatUint(rand.Uint64()%1e6, 16) }
func IsNotExist(err error) bool              { return errors.Is(err, fs.ErrNotExist) }

// JSON, on strings and bytes.

func JSONMarshal(v any) Result {
	data, err := json.Marshal(v)
	if err != nil {
		return Result{err, false}
	}
	return Result{data, true}
}

func JSONMarshalString(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(data)
}

func JSONUnmarshal(data []byte, target any) Result {
	if err := json.Unmarshal(data, target); err != nil {
		return Result{err, false}
	}
	return Result{OK: true}
}

func JSONUnmarshalString(s string, target any) Result {
	return JSONUnmarshal([]byte(s), target)
}

// Fs is a file system sandboxed under root ("/" for none).
type Fs struct { // want Fs:`Read: result 0: content of example.com/core.Fs.validatePath\(\$recv, \$0\).Value.*; Write: .*?writes example.com/core.Fs.validatePath\(\$recv, \$0\).Value; in place example.com/core.Fs.validatePath\(\$recv, \$0\).Value; WriteAtomic: .*?writes example.com/core.Fs.validatePath\(\$recv, \$0\).Value; WriteMode:`
	root string
}

func (m *Fs) New(root string) *Fs {
	if root == "" {
		root = "/"
	}
	m.root = root
	return m
}

func (m *Fs) NewUnrestricted() *Fs { return (&Fs{}).New("/") }

func (m *Fs) path(p string) string {
	root := m.root
	if root == "" {
		root = "/"
	}
	if p == "" {
		return root
	}
	if root == "/" && !PathIsAbs(p) {
		cwd := ""
		if r := Getwd(); r.OK {
			cwd = r.Value.(string)
		}
		return PathJoin(cwd, p)
	}
	clean := CleanPath("/"+p, "/")
	if root == "/" {
		return clean
	}
	return PathJoin(root, clean[1:])
}

// validatePath resolves p under the root, following symlinks one element
// at a time, and refuses a path that leaves the root.
func (m *Fs) validatePath(p string) Result {
	root := m.root
	if root == "" {
		root = "/"
	}
	if root == "/" {
		return Result{m.path(p), true}
	}
	current := root
	for _, part := range Split(CleanPath("/"+p, "/"), "/") {
		if part == "" {
			continue
		}
		next := PathJoin(current, part)
		real := PathEvalSymlinks(next)
		if !real.OK {
			err, _ := real.Value.(error)
			if IsNotExist(err) {
				current = next
				continue
			}
			return Result{err, false}
		}
		rel := PathRel(root, real.Value.(string))
		if !rel.OK || HasPrefix(rel.Value.(string), "..") {
			return Result{E("fs.validatePath", Concat("sandbox escape: ", p), nil), false}
		}
		current = real.Value.(string)
	}
	return Result{current, true}
}

func (m *Fs) Read(p string) Result {
	vp := m.validatePath(p)
	if !vp.OK {
		return vp
	}
	r := ReadFile(vp.Value.(string))
	if !r.OK {
		return r
	}
	return Result{string(r.Value.([]byte)), true}
}

// Write writes in place.
func (m *Fs) Write(p, content string) Result {
	return m.WriteMode(p, content, 0o644)
}

func (m *Fs) WriteMode(p, content string, mode FileMode) Result {
	vp := m.validatePath(p)
	if !vp.OK {
		return vp
	}
	full := vp.Value.(string)
	if r := MkdirAll(PathDir(full), 0o755); !r.OK {
		return r
	}
	if r := WriteFile(full, []byte(content), mode); !r.OK {
		return r
	}
	return Result{OK: true}
}

// WriteAtomic writes a temp file and renames it over p.
func (m *Fs) WriteAtomic(p, content string) Result {
	vp := m.validatePath(p)
	if !vp.OK {
		return vp
	}
	full := vp.Value.(string)
	if r := MkdirAll(PathDir(full), 0o755); !r.OK {
		return r
	}
	tmp := full + ".tmp." + shortRand()
	if r := WriteFile(tmp, []byte(content), 0o644); !r.OK {
		return r
	}
	if r := Rename(tmp, full); !r.OK {
		Remove(tmp)
		return r
	}
	return Result{OK: true}
}

func (m *Fs) Exists(p string) bool {
	vp := m.validatePath(p)
	if !vp.OK {
		return false
	}
	return Stat(vp.Value.(string)).OK
}

func (m *Fs) IsFile(p string) bool {
	vp := m.validatePath(p)
	if !vp.OK {
		return false
	}
	r := Stat(vp.Value.(string))
	if !r.OK {
		return false
	}
	return r.Value.(fs.FileInfo).Mode().IsRegular()
}

func (m *Fs) IsDir(p string) bool {
	vp := m.validatePath(p)
	if !vp.OK {
		return false
	}
	r := Stat(vp.Value.(string))
	return r.OK && r.Value.(fs.FileInfo).IsDir()
}

func (m *Fs) List(p string) Result {
	vp := m.validatePath(p)
	if !vp.OK {
		return vp
	}
	return ReadDir(DirFS(vp.Value.(string)), ".")
}

func (m *Fs) Delete(p string) Result {
	vp := m.validatePath(p)
	if !vp.OK {
		return vp
	}
	return Remove(vp.Value.(string))
}
