package statuslint

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"
)

// A fileFact records what a function (or a function-typed package-level
// variable with a known initial value) does with files, in terms of its
// parameters, so that its callers, in its own package or in importing
// ones, see the same reads and writes as if the body were inline:
//
//	func load(ws string) (Doc, error)  // reads and decodes filepath.Join(ws, "doc.json") into result 0
//	func save(ws string, d Doc) error   // writes filepath.Join(ws, "doc.json")
//	func statusPath(ws string) string   // returns the path filepath.Join(ws, "doc.json")
//	func unmarshal(s string, v any)     // decodes $0 into $1
//
// Paths are templates: keys (see unit.key) in which paramMarker(i) stands
// for argument i (recvIndex for the receiver).
type fileFact struct {
	Path    string      // a path helper: result 0 is this path
	Reads   []readSum   // file content the caller receives
	Decodes []decodeSum // content the function decodes for the caller
	Writes  []string    // paths it writes
}

// A readSum is content of the file at Path that reaches the caller through
// a result or a parameter (a pointer the function fills).
type readSum struct {
	Path    string
	To      dest
	Decoded bool // decoded (a struct, a map...), not bytes or text
}

// A decodeSum is content passed in parameter From that the function
// decodes into To.
type decodeSum struct {
	From int
	To   dest
}

// A dest is result Index, or parameter Index when Param is set.
type dest struct {
	Index int
	Param bool
}

func (d dest) String() string {
	if d.Param {
		return param(d.Index)
	}
	return "result " + strconv.Itoa(d.Index)
}

func (*fileFact) AFact() {}

func (f *fileFact) String() string {
	var parts []string
	if f.Path != "" {
		parts = append(parts, "path "+show(f.Path))
	}
	for _, r := range f.Reads {
		what := "reads"
		if r.Decoded {
			what = "reads decoded"
		}
		parts = append(parts, fmt.Sprintf("%s %s into %s", what, show(r.Path), r.To))
	}
	for _, d := range f.Decodes {
		parts = append(parts, fmt.Sprintf("decodes %s into %s", param(d.From), d.To))
	}
	for _, w := range f.Writes {
		parts = append(parts, "writes "+show(w))
	}
	return strings.Join(parts, "; ")
}

func (f *fileFact) empty() bool {
	return f.Path == "" && len(f.Reads) == 0 && len(f.Decodes) == 0 && len(f.Writes) == 0
}

func (f *fileFact) equal(g *fileFact) bool {
	return f.Path == g.Path && slices.Equal(f.Reads, g.Reads) &&
		slices.Equal(f.Decodes, g.Decodes) && slices.Equal(f.Writes, g.Writes)
}

// sort puts the lists in a canonical order, without duplicates.
func (f *fileFact) sort() {
	slices.SortFunc(f.Reads, func(a, b readSum) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), compareDest(a.To, b.To), boolCompare(a.Decoded, b.Decoded))
	})
	f.Reads = slices.Compact(f.Reads)
	slices.SortFunc(f.Decodes, func(a, b decodeSum) int {
		return cmp.Or(cmp.Compare(a.From, b.From), compareDest(a.To, b.To))
	})
	f.Decodes = slices.Compact(f.Decodes)
	slices.Sort(f.Writes)
	f.Writes = slices.Compact(f.Writes)
}

func compareDest(a, b dest) int {
	return cmp.Or(boolCompare(a.Param, b.Param), cmp.Compare(a.Index, b.Index))
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Markers inside keys. A key containing localMarker names something that
// exists only inside one function, so it cannot be a template.
const (
	recvIndex   = -1
	localMarker = "\x02"
	labelMarker = "\x01" // the content a parameter brings in (see unit.seed)
)

func paramMarker(i int) string { return "\x00" + strconv.Itoa(i) + "\x00" }

func labelKey(i int) string { return labelMarker + strconv.Itoa(i) }

// labelIndex returns the parameter whose content key k stands for.
func labelIndex(k string) (int, bool) {
	s, ok := strings.CutPrefix(k, labelMarker)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

func isTemplate(k string) bool {
	return k != "" && !strings.Contains(k, localMarker) && !strings.HasPrefix(k, labelMarker)
}

func param(i int) string {
	if i == recvIndex {
		return "$recv"
	}
	return "$" + strconv.Itoa(i)
}

// show renders a template for humans: $0 for argument 0, $recv for the
// receiver.
func show(t string) string {
	parts := strings.Split(t, "\x00")
	for i := 1; i < len(parts); i += 2 {
		n, _ := strconv.Atoi(parts[i])
		parts[i] = param(n)
	}
	return strings.Join(parts, "")
}

// substitute returns the key that template t has at a call: each
// parameter marker replaced by the key of the call's argument. expr is the
// first argument substituted, preferably not the receiver (for messages),
// or nil if t has none.
func (u *unit) substitute(call *ast.CallExpr, t string) (key string, expr ast.Expr, ok bool) {
	var b strings.Builder
	recv := false
	parts := strings.Split(t, "\x00")
	// parts alternate: text, index, text, index, ..., text
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return "", nil, false
		}
		arg := u.argument(call, n)
		if arg == nil {
			return "", nil, false
		}
		if expr == nil || (n != recvIndex && recv) {
			expr, recv = arg, n == recvIndex
		}
		b.WriteString(u.key(arg, 0))
	}
	return b.String(), expr, true
}

// argument returns argument n of call, or its receiver for recvIndex.
func (u *unit) argument(call *ast.CallExpr, n int) ast.Expr {
	if n == recvIndex {
		sel, ok := unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return nil
		}
		if s, ok := u.info.Selections[sel]; !ok || s.Kind() != types.MethodVal {
			return nil
		}
		return sel.X
	}
	if call.Ellipsis.IsValid() || n < 0 || n >= len(call.Args) {
		return nil
	}
	return call.Args[n]
}

// summary is the fact the function's accesses give its callers.
func (u *unit) summary() *fileFact {
	f := &fileFact{Path: u.pathResult()}
	defer f.dropVariadic(u.fn.sig)
	var readKeys, writeKeys []string
	for _, r := range u.reads {
		readKeys = append(readKeys, r.key)
	}
	for _, w := range u.writes {
		if isTemplate(w.key) && !slices.Contains(u.renamed, w.key) {
			writeKeys = append(writeKeys, w.key)
		}
	}
	// A function that reads and writes one file is a read-modify-write of
	// its own (reported there); for its callers it is neither.
	both := func(k string) bool { return slices.Contains(readKeys, k) && slices.Contains(writeKeys, k) }
	for _, k := range writeKeys {
		if !both(k) {
			f.Writes = append(f.Writes, k)
		}
	}
	add := func(to dest, srcs []src) {
		for _, s := range srcs {
			if s.kind == writer {
				continue
			}
			if i, ok := labelIndex(s.key); ok {
				if s.kind == decoded && (!to.Param || to.Index != i) {
					f.Decodes = append(f.Decodes, decodeSum{From: i, To: to})
				}
				continue
			}
			if isTemplate(s.key) && !both(s.key) {
				f.Reads = append(f.Reads, readSum{Path: s.key, To: to, Decoded: s.kind == decoded})
			}
		}
	}
	for i, srcs := range u.results {
		add(dest{Index: i}, srcs)
	}
	for v, i := range u.params {
		if outParam(v.Type()) {
			add(dest{Index: i, Param: true}, u.taint[v])
		}
	}
	f.sort()
	return f
}

// dropVariadic removes the templates that name a variadic parameter: a
// call's arguments do not map to it one to one.
func (f *fileFact) dropVariadic(sig *types.Signature) {
	if sig == nil || !sig.Variadic() {
		return
	}
	m := paramMarker(sig.Params().Len() - 1)
	if strings.Contains(f.Path, m) {
		f.Path = ""
	}
	f.Reads = slices.DeleteFunc(f.Reads, func(r readSum) bool { return strings.Contains(r.Path, m) })
	f.Writes = slices.DeleteFunc(f.Writes, func(w string) bool { return strings.Contains(w, m) })
	f.Decodes = slices.DeleteFunc(f.Decodes, func(d decodeSum) bool { return d.From == sig.Params().Len()-1 })
}

// pathResult returns the template that every return statement gives as the
// function's string result 0, ignoring empty-string returns (on error
// paths), if there is exactly one.
func (u *unit) pathResult() string {
	if u.fn.sig == nil || u.fn.sig.Results().Len() == 0 || !isString(u.fn.sig.Results().At(0).Type()) {
		return ""
	}
	path := ""
	for _, k := range u.resultKeys {
		switch {
		case k == `""`:
		case !isTemplate(k) || (path != "" && k != path):
			return ""
		default:
			path = k
		}
	}
	return path
}
