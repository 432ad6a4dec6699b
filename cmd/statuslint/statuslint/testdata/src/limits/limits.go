// Package limits pins down statuslint's known false negatives and false
// positives, so that a change in them is seen. Each is listed in
// docs/RFC.md (statuslint section).
package limits

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentstate/core/fs"
	"github.com/agentstate/core/status"
)

type doc struct {
	Status string `json:"status"`
}

func load(p string) doc {
	data, _ := os.ReadFile(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	return d
}

func save(p string, d doc) {
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(p, out, 0o644)
}

// Helpers with names the analyzer does not know are found through facts:
// load reads, and save writes, the file named by their first argument.
func viaHelpers(p string) {
	d := load(p)
	d.Status = "running"
	save(p, d) // want `read-modify-write of p`
}

// Package-level function variables with a known initial value stand for
// that function (tests may swap them; the analyzer does not see that).
var loadFn, saveFn = load, save

func viaFuncVariables(p string) {
	d := loadFn(p)
	d.Status = "running"
	saveFn(p, d) // want `read-modify-write of p`
}

// FALSE NEGATIVE: helpers called through struct fields, local variables or
// interfaces have no static callee (name them with -readers / -writers).
type service struct {
	load func(string) doc
	save func(string, doc)
}

func (s *service) viaFields(p string) {
	d := s.load(p)
	d.Status = "running"
	s.save(p, d)
}

// FALSE NEGATIVE: two wrapper instances (package-level variables) are two
// different receivers, even when both reach the same file.
type store struct{ dir string }

func (s *store) get(name string) doc    { return load(filepath.Join(s.dir, name)) }
func (s *store) put(name string, d doc) { save(filepath.Join(s.dir, name), d) }

var reader, writer = &store{"/ws"}, &store{"/ws"}

func twoInstances() {
	d := reader.get("status.json")
	d.Status = "running"
	writer.put("status.json", d)
}

// A read helper that returns nothing (it stores what it read in a
// package-level variable) still reads: its fact says so.
var cache doc

func loadIntoCache(p string) {
	cache = load(p)
}

func viaSideEffect(p string) {
	loadIntoCache(p)
	save(p, cache) // want `read-modify-write of p without a lock: read at line 91`
}

// FALSE NEGATIVE: the same file under two different expressions.
func twoSpellings(ws string) {
	p := filepath.Join(ws, "status.json")
	data, _ := os.ReadFile(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(ws+"/status.json", out, 0o644)
}

// FALSE NEGATIVE: a stale copy read outside Mutate and stored by it.
func staleIntoMutate(ctx context.Context, p string) {
	st, _ := status.Load(ctx, p)
	_, _ = status.Mutate(ctx, p, func(s *status.Status) error {
		*s = st
		return nil
	})
}

// FALSE NEGATIVE: the read and the write are in different functions, and
// no function calls both.
func readHere(p string) doc { return load(p) }
func writeThere(p string, d doc) {
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(p, out, 0o644)
}

// Reported on purpose: a decision made on a read (the document is
// queued) and a write that does not carry the read value: between the two,
// another writer may have changed the state that the decision was based on.
func checkThenWrite(p string) {
	if load(p).Status == "queued" {
		save(p, doc{Status: "running"}) // want `read-modify-write of p`
	}
}

// FALSE POSITIVE: the author's own in-process lock makes this safe for one
// process (not for several). Silence it with //statuslint:ignore.
var mu sync.Mutex

func underOwnLock(p string) {
	mu.Lock()
	defer mu.Unlock()
	data, _ := os.ReadFile(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(p, out, 0o644) // want `read-modify-write of p`
}

// A variable reassigned to another file between the read and the write is
// another value: not reported.
func reassigned(a, b string) {
	p := a
	data, _ := os.ReadFile(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	p = b
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(p, out, 0o644)
}

// Function literals in package-level variables are analysed as functions.
var handler = func(p string) {
	data, _ := os.ReadFile(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	out, _ := json.Marshal(d)
	_ = os.WriteFile(p, out, 0o644) // want `read-modify-write of p`
}

type line struct{ cmd, arg string }

// parseLines builds its result from the lines of what it is given: a
// decode, judged by its result's type.
func parseLines(text []byte) []line {
	var out []line
	for _, l := range strings.Split(string(text), "\n") {
		cmd, arg, _ := strings.Cut(l, " ")
		out = append(out, line{cmd, arg})
	}
	return out
}

func render(ls []line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.cmd + " " + l.arg + "\n")
	}
	return b.String()
}

func viaParser(p string) {
	data, _ := os.ReadFile(p)
	ls := parseLines(data)
	ls = append(ls, line{"pick", "abc"})
	_ = fs.WriteAtomic(p, []byte(render(ls)), 0o644) // want `read-modify-write of p`
}

// FALSE NEGATIVE: a rewrite of raw text (here, lines prepended) is not a
// document's read-modify-write, though another writer's update is lost.
func prepend(p, first string) {
	data, _ := os.ReadFile(p)
	_ = fs.WriteAtomic(p, append([]byte(first+"\n"), data...), 0o644)
}

// FALSE NEGATIVE: the same document parsed inline, not by a function that
// returns it.
func parseInline(p string) {
	data, _ := os.ReadFile(p)
	var ls []line
	for _, l := range strings.Split(string(data), "\n") {
		cmd, arg, _ := strings.Cut(l, " ")
		ls = append(ls, line{cmd, arg})
	}
	ls = append(ls, line{"pick", "abc"})
	_ = fs.WriteAtomic(p, []byte(render(ls)), 0o644)
}

// A writer stored in a package-level variable by one function is not the
// parameter of another that writes to it: not reported.
var out io.Writer = os.Stdout

func setOutput(w io.Writer) { out = w }

func done(f *os.File) { fmt.Fprintf(out, "done with %s\n", f.Name()) }

func readThenLog(p string) {
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	var d doc
	_ = json.NewDecoder(f).Decode(&d)
	done(f)
}

// A one-value file stored in a structure built from a string (a name, a
// namespace) is a value, not a parsed document: not reported.
type node struct{ kind, value string }

func scalar(v string) *node { return &node{"scalar", v} }

func setPrevious(p string, nodes map[string]*node) {
	data, _ := os.ReadFile(p)
	nodes["previous"] = scalar(string(data))
	_ = fs.WriteAtomic(p, []byte("current"), 0o644)
}

// FALSE NEGATIVE: a function kept in a struct field whose results are
// all of the standard library (bytes, here) is opaque where it is called
// through the field: its signature says nothing of what it reads. (One
// that returns a type of the program is taken to do what the program's
// functions of its signature that return a file's content do.)
type options struct{ load func(string) ([]byte, error) }

func newOptions() *options { return &options{load: os.ReadFile} }

func runWithOptions(o *options, p string) {
	data, _ := o.load(p)
	var d doc
	_ = json.Unmarshal(data, &d)
	d.Status = "done"
	save(p, d)
}

func command(p string) { runWithOptions(newOptions(), p) }

// Not parses, and not reported: an encoder made for a writer, a reader's
// description of itself (a Stat), a decoder that holds its reader some
// levels down.
type encoder struct{ st *encState }

type encState struct {
	w io.Writer
	n int
}

func newEncoder(w io.Writer) *encoder { return &encoder{&encState{w: w}} }

type decoder struct{ st *decState }

type decState struct{ r io.Reader }

func newDecoder(r io.Reader) *decoder { return &decoder{&decState{r}} }

type fileInfo struct {
	name string
	size int
}

type source struct{ f *os.File }

func (s *source) Read(p []byte) (int, error) { return s.f.Read(p) }
func (s *source) Stat() fileInfo             { return fileInfo{s.f.Name(), 0} }

func statThenWrite(p string, content []byte) {
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	src := &source{f}
	_ = src.Stat()
	_ = fs.WriteAtomic(p, content, 0o644)
}

func decoderThenWrite(p string, content []byte) {
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	_ = newDecoder(f)
	_ = fs.WriteAtomic(p, content, 0o644)
}

func encoderThenWrite(p string, content []byte) {
	f, _ := os.OpenFile(p, os.O_RDWR, 0)
	_ = newEncoder(f)
	_ = fs.WriteAtomic(p, content, 0o644)
}

// Not parses either: a view of the bytes it was given, and a structure of
// numbers that measures them. Not reported.
type view struct {
	b   []byte
	pos int
}

func newView(b []byte) view { return view{b: b} }

type props struct{ size, width int }

func measure(b []byte) props { return props{size: len(b), width: int(b[0])} }

func viewThenWrite(p string) {
	data, _ := os.ReadFile(p)
	_ = newView(data)
	_ = fs.WriteAtomic(p, nil, 0o644)
}

func measureThenWrite(p string) {
	data, _ := os.ReadFile(p)
	_ = measure(data)
	_ = fs.WriteAtomic(p, nil, 0o644)
}

// FALSE POSITIVE: a function value whose functions are not in sight is
// taken for every loader of its signature (load, here), so a fresh
// document that it makes is taken for a loaded one.
type makers struct{ fresh func(string) doc }

func writeFresh(m *makers, p string) {
	d := m.fresh(p)
	save(p, d) // want `read-modify-write of p without a lock: read at line 338`
}

// FALSE NEGATIVE: a document that keeps its own path is followed to it
// when its own method saves it, not when it is kept inside another value
// that saves it through an interface (a credential store holding the
// configuration).
type selfDoc struct {
	Filename string `json:"-"`
	Status   string `json:"status"`
}

func loadSelf(dir string) *selfDoc {
	p := filepath.Join(dir, "config.json")
	d := &selfDoc{Filename: p}
	data, _ := os.ReadFile(p)
	_ = json.Unmarshal(data, d)
	return d
}

func (d *selfDoc) save() {
	out, _ := json.Marshal(d)
	_ = fs.WriteAtomic(d.Filename, out, 0o644)
}

type saver interface{ save() }

type keeper struct{ doc saver }

func (k keeper) store() { k.doc.save() }

func completeKept(dir string) {
	d := loadSelf(dir)
	d.Status = "done"
	keeper{doc: d}.store()
}
