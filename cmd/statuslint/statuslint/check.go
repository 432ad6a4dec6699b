package statuslint

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// An event is a file access made by a call: a read and decode, a write, a
// truncating whole-file write (in place), a lock operation.
type event struct {
	kind  eventKind
	key   string
	instr ssa.CallInstruction
	what  string // in place: what truncates
	desc  string // the path as written at the call, if known
	lock  lockOp
	pos   token.Pos // where to report it, if not at the call (inside a function literal)
	maybe bool      // a write that only some implementation of an interface makes
	alt   bool      // one of the keys a path assigned on several paths may have (see withAlts)
	after bool      // a read that the call makes after its writes (see fnFact.Rereads)
}

type eventKind uint8

const (
	evRead eventKind = iota + 1
	evWrite
	evInPlace
	evTrunc // an open whose flags the caller gives (see fnFact.Truncs)
	evLock
	evCycle // a call of a function that reads and writes the file back itself (see fnFact.Cycles)
)

func (s *fnState) event(kind eventKind, key string, instr ssa.CallInstruction, desc string) {
	if key == "" {
		return
	}
	maybe := s.union && kind == evWrite && !s.givesDocument(instr, key)
	s.events = append(s.events, event{kind: kind, key: key, instr: instr, desc: desc, maybe: maybe})
}

// givesDocument reports whether the call gives the content of file key,
// or what was decoded from it, to what it calls: a write of that file by
// some implementation of an interface is then taken to be made, since the
// call hands it the document (a configuration object, loaded once, whose
// Write saves it).
func (s *fnState) givesDocument(instr ssa.CallInstruction, key string) bool {
	for _, a := range callArgs(instr.Common()) {
		if a == nil {
			continue
		}
		for _, at := range s.atomsOf(a) {
			if (at.Kind == aDecoded || at.Kind == aContent) && at.Key == key {
				return true
			}
		}
	}
	return false
}

// truncate records an open with flags: a truncating write (in place) when
// they say O_TRUNC, a decision for the caller when a parameter gives them.
func (s *fnState) truncate(instr ssa.CallInstruction, key, what string, flag intArg, desc string) {
	switch {
	case flag.FromParam:
		s.events = append(s.events, event{kind: evTrunc, key: key, instr: instr, what: what, desc: desc,
			lock: lockOp{How: flag}})
	case s.c.truncates(flag):
		s.event(evWrite, key, instr, desc)
		s.inPlace(instr, key, what, desc)
	}
}

func (s *fnState) inPlace(instr ssa.CallInstruction, key, what, desc string) {
	if what == "" {
		return
	}
	s.events = append(s.events, event{kind: evInPlace, key: key, instr: instr, what: what, desc: desc})
}

func (s *fnState) lock(instr ssa.CallInstruction, op lockOp) {
	s.events = append(s.events, event{kind: evLock, instr: instr, lock: op})
}

// summary is the fact the function's body gives its callers.
func (s *fnState) summary() *fnFact {
	f := &fnFact{Recv: s.fn.Signature.Recv() != nil}
	s.returns(f)
	for _, p := range s.fn.Params {
		s.storesTo(f, p)
	}
	for _, fv := range s.fn.FreeVars {
		s.storesTo(f, fv)
	}
	for g, as := range s.globalTpl {
		f.Globals = append(f.Globals, globalSet{g: g, Atoms: as})
	}
	events := s.withAlts(s.events)
	reads, writes := make(map[string]bool), make(map[string]bool)
	for _, e := range events {
		switch {
		case e.kind == evRead && s.reread(e):
		case e.kind == evRead:
			reads[e.key] = true
		case e.kind == evWrite && !e.maybe:
			writes[e.key] = true
		}
	}
	for _, e := range events {
		// A function that reads and writes one file is a read-modify-write
		// of its own (reported here, or under a lock); for its callers it
		// is neither. The file behind a parameter is its caller's to judge.
		_, via := viaIndex(e.key)
		both := reads[e.key] && writes[e.key] && !via
		if e.kind == evRead && !both && isTemplate(e.key) && s.reread(e) {
			// a refresh of a file the function does not otherwise read
			f.Rereads = append(f.Rereads, e.key)
		}
		if both && e.kind == evWrite && isTemplate(e.key) && (s.lockedCycle(e.key) || libraryDoc(e.key)) {
			f.Cycles = append(f.Cycles, e.key)
		}
		if !isTemplate(e.key) || both && (e.kind != evRead || !s.refillsOnly(e.key) && !s.keeps(f, e.key)) {
			continue
		}
		switch e.kind {
		case evRead:
			if !s.reread(e) {
				f.Reads = append(f.Reads, e.key)
			}
		case evWrite:
			switch {
			case s.renamed[e.key]:
			case e.maybe:
				f.MayWrites = append(f.MayWrites, e.key)
			default:
				f.Writes = append(f.Writes, e.key)
			}
		case evTrunc:
			f.Truncs = append(f.Truncs, trunc{Key: e.key, What: e.what, Flag: e.lock.How})
		case evInPlace:
			if !isJSONKey(e.key) && hasParam(e.key) && !s.renamed[e.key] {
				f.InPlace = append(f.InPlace, trunc{Key: e.key, What: e.what})
			}
		}
	}
	s.dropPathDecodes(f)
	f.Locks = s.netLocks()
	for i, p := range s.fn.Params {
		if s.renamed[s.term(p)] {
			f.Moves = append(f.Moves, i)
		}
	}
	for p := range s.fills {
		// a decoder that fills by reflection takes its target as any
		if p < len(s.fn.Params) && isEmptyInterface(s.fn.Params[p].Type()) {
			f.Fills = append(f.Fills, p)
		}
	}
	f.normalize()
	return f
}

// keeps reports whether the function keeps the document of file k that it
// read beyond its return: in a result, where a parameter points (its
// receiver's fields) or in a package-level variable. Its own write-back is
// reported here; a caller that writes the kept document again makes
// another read-modify-write of its own.
func (s *fnState) keeps(f *fnFact, k string) bool {
	has := func(as atoms) bool {
		return slices.ContainsFunc(as, func(a atom) bool { return a.Kind == aDecoded && a.Key == k })
	}
	if slices.ContainsFunc(f.Results, has) ||
		slices.ContainsFunc(f.Stores, func(p paramSet) bool { return has(p.Atoms) }) ||
		slices.ContainsFunc(f.Globals, func(g globalSet) bool { return has(g.Atoms) }) {
		return true
	}
	for _, as := range s.c.globals {
		if has(as) {
			return true
		}
	}
	return false
}

// withAlts adds to evs, for each access to a path assigned on several
// paths, the same access to each key the path may have (see phiTerm).
func (s *fnState) withAlts(evs []event) []event {
	out := evs
	for _, e := range evs {
		switch e.kind {
		case evRead, evWrite, evTrunc, evInPlace:
			for _, k := range s.alts[e.key] {
				if out == nil || len(out) == len(evs) {
					out = slices.Clone(evs)
				}
				a := e
				a.key, a.alt = k, true
				out = append(out, a)
			}
		}
	}
	return out
}

// reread reports whether the read e of a viper instance's document
// refreshes what the function has just written: it is made after the
// function's writes (every path to it
// passes one, of any file, since an instance a parameter holds is the
// caller's file; or a callee re-reads after its own write), and no write
// of its file can follow it. What is read back there is what was written,
// so it is no read that the write puts back: the document written is the
// one read before (viper re-read into its own instance after
// WriteConfig).
func (s *fnState) reread(e event) bool {
	if e.kind != evRead || !libraryDoc(e.key) {
		return false
	}
	if s.cycleOrder == nil {
		s.cycleOrder = newOrder(s)
	}
	o := s.cycleOrder
	after := e.after
	for _, w := range s.events {
		if w.kind != evWrite || w.maybe {
			continue
		}
		if w.instr == e.instr {
			if w.key == e.key && !e.after {
				return false // a call that reads and writes the file, in its own order
			}
			continue
		}
		if w.key == e.key && o.reaches(e.instr, w.instr) {
			return false
		}
		after = after || o.dominates(w.instr, e.instr)
	}
	return after
}

// readRank orders the reads of a file for a finding that names where a
// document was loaded: first a read the package makes itself (a library
// call) in a function that does not write the file back (a loader), then
// one in a function that does, then one through a helper of the package,
// then one through another package; a refresh after a write (see reread)
// last.
func (s *fnState) readRank(e event) int {
	rank := 0
	fn := e.instr.Common().StaticCallee()
	obj := staticObject(e.instr.Common())
	if obj == nil || models[funcKey(obj.Origin())] == nil && (fn == nil || s.c.summaryOf(fn) != nil) {
		rank = 3
		if obj != nil && obj.Pkg() == s.c.pass.Pkg {
			rank = 2
		}
	} else if slices.ContainsFunc(s.events, func(w event) bool { return w.kind == evWrite && w.key == e.key }) {
		rank = 1
	}
	if s.reread(e) {
		rank += 4
	}
	if strings.HasSuffix(s.c.pass.Fset.Position(e.instr.Pos()).Filename, "_test.go") {
		rank += 8 // a test's set-up
	}
	return rank
}

// refillsOnly reports whether every write of file k that a read of it
// reaches is an unlocked refill after a failed read (see refill), and
// there is one: the function writes a fresh document, which loses
// nothing, and for its callers it reads k (a loader that writes a default
// configuration when there is none returns what the file holds).
func (s *fnState) refillsOnly(k string) bool {
	if s.cycleOrder == nil {
		s.cycleOrder = newOrder(s)
	}
	o := s.cycleOrder
	refills := false
	for _, w := range s.events {
		if w.kind != evWrite || w.key != k || w.maybe {
			continue
		}
		for _, r := range s.events {
			if r.kind != evRead || r.key != k || r.instr == w.instr || !o.reaches(r.instr, w.instr) {
				continue
			}
			if o.protected(r.instr, w.instr) || !s.refill(o, r, w) {
				return false
			}
			refills = true
		}
	}
	return refills
}

// lockedCycle reports whether every write of file k that a read of it
// reaches is made under a lock held since that read: the function's own
// read-modify-write of k is safe, and a caller that decided on an earlier
// read acts on a stale state (see checkDecisions). An unlocked one is
// reported in the function itself.
func (s *fnState) lockedCycle(k string) bool {
	if s.cycleOrder == nil {
		s.cycleOrder = newOrder(s)
	}
	o := s.cycleOrder
	paired := false
	for _, w := range s.events {
		if w.kind != evWrite || w.key != k {
			continue
		}
		for _, r := range s.events {
			if r.kind == evRead && r.key == k && r.instr != w.instr && o.reaches(r.instr, w.instr) {
				if !o.protected(r.instr, w.instr) {
					return false
				}
				paired = true
			}
		}
	}
	return paired || s.c.exempt[s.fn]
}

// dropPathDecodes removes the decodes of parameters that the function uses
// as paths: a parameter that names a file is text, but not the document.
// (A path can flow where content flows, a Result holding either.)
func (s *fnState) dropPathDecodes(f *fnFact) {
	var keys []string
	for _, e := range s.events {
		keys = append(keys, e.key)
	}
	for _, r := range f.Results {
		for _, a := range r {
			keys = append(keys, a.Key)
		}
	}
	isPath := func(i int) bool {
		m := paramMarker(i)
		return slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, m) })
	}
	keep := func(a atom) bool { return a.Kind != aDecParam || !isPath(a.Param) }
	for i := range f.Results {
		f.Results[i] = f.Results[i].filter(keep)
	}
	for i := range f.Stores {
		f.Stores[i].Atoms = f.Stores[i].Atoms.filter(keep)
	}
	f.Reads = slices.DeleteFunc(f.Reads, func(k string) bool {
		i, via := viaIndex(k)
		return via && isPath(i)
	})
}

func isEmptyInterface(t types.Type) bool {
	i, ok := t.Underlying().(*types.Interface)
	return ok && i.Empty()
}

func hasParam(k string) bool {
	_, via := viaIndex(k)
	return via || containsByte(k, paramDelim[0])
}

func containsByte(s string, b byte) bool {
	for i := range len(s) {
		if s[i] == b {
			return true
		}
	}
	return false
}

// returns records what the function's results may hold and, for each
// result, the path every return gives it.
func (s *fnState) returns(f *fnFact) {
	n := s.fn.Signature.Results().Len()
	if n == 0 {
		return
	}
	f.Results = make([]atoms, n)
	f.Paths = make([]string, n)
	agree := make([]bool, n)
	for i := range agree {
		agree[i] = true
	}
	for _, b := range s.fn.Blocks {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok {
			continue
		}
		for i, v := range ret.Results {
			if i >= n {
				break
			}
			f.Results[i].add(s.atomsOf(v).filter(atom.exportable)...)
			if isZero(v) || !agree[i] {
				continue
			}
			t := s.term(v)
			if g := storedGlobal(v); g != nil {
				// a path the function also keeps in a package-level
				// variable is the file that variable names: a writer
				// that uses the variable writes what this returns
				t = s.loadTerm(g)
			}
			switch {
			case !isTemplate(t) || !isString(v.Type()) && strings.ContainsAny(t, "("):
				// a path, or (for other types) an access path to an
				// object: a parameter's, a variable's field
				agree[i] = false
			case f.Paths[i] == "":
				f.Paths[i] = t
			case f.Paths[i] != t:
				agree[i] = false
			}
		}
	}
	for i := range f.Paths {
		if !agree[i] {
			f.Paths[i] = ""
		}
		if f.Paths[i] == "" && isString(s.fn.Signature.Results().At(i).Type()) {
			// one of the files a package-level variable lists
			if g := s.c.returnedFile(s.fn, i); g != nil {
				f.Paths[i] = s.loadTerm(g)
			}
		}
		s.parsed(f, i)
	}
}

// storedGlobal returns the package-level variable of this package that v
// is stored in, if it is one.
func storedGlobal(v ssa.Value) *ssa.Global {
	if v.Referrers() == nil {
		return nil
	}
	for _, r := range *v.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Val == v {
			if g, ok := st.Addr.(*ssa.Global); ok && isString(v.Type()) {
				return g
			}
		}
	}
	return nil
}

// isZero reports whether v is a zero constant ("", nil, 0), which error
// paths return.
func isZero(v ssa.Value) bool {
	c, ok := v.(*ssa.Const)
	return ok && c.IsNil() || ok && c.Value != nil && c.Value.ExactString() == `""`
}

// storesTo records what the function stores where parameter p points.
func (s *fnState) storesTo(f *fnFact, p ssa.Value) {
	if !reference(p.Type()) {
		return
	}
	i := s.index[p]
	as := s.mem[object{v: p}].filter(func(a atom) bool {
		return a.exportable() && (a.Kind != aParam || a.Param != i)
	})
	if len(as) > 0 {
		f.Stores = append(f.Stores, paramSet{Param: i, Atoms: as})
	}
}

// reference reports whether a callee can store through a value of type t.
func reference(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Slice, *types.Interface, *types.Chan, *types.Struct:
		return true
	}
	return false
}

// report reports the package's findings.
func (c *checker) report() {
	c.readSites = make(map[string]readSite)
	for _, fn := range c.funcs {
		s := c.states[fn]
		if s == nil || fn.Synthetic != "" {
			continue
		}
		for _, e := range s.events {
			if e.kind == evRead && programKey(e.key) {
				site := readSite{fn: fn, pos: s.readPos(e), instr: e.instr, rank: s.readRank(e)}
				if old, ok := c.readSites[e.key]; !ok || site.rank < old.rank ||
					site.rank == old.rank && c.pass.Fset.Position(site.pos).String() < c.pass.Fset.Position(old.pos).String() {
					c.readSites[e.key] = site
				}
			}
		}
	}
	for _, fn := range c.funcs {
		if c.exempt[fn] || fn.Synthetic != "" {
			continue
		}
		if s := c.states[fn]; s != nil {
			s.check()
		}
	}
}

// check reports the function's bare read-modify-writes and in-place writes
// of JSON files.
func (s *fnState) check() {
	order := newOrder(s)
	var reads, writes []event
	for _, e := range s.events {
		if _, via := viaIndex(e.key); via {
			continue // a caller knows which file, if any, its argument is
		}
		switch e.kind {
		case evRead:
			reads = append(reads, e)
		case evWrite:
			if !e.maybe {
				writes = append(writes, e)
			}
		case evInPlace:
			if isJSONKey(e.key) && s.concurrent(order, e) {
				s.c.reportf(s.c.eventPos(e), "not atomic: %s %s in place, so a concurrent reader can see an empty "+
					"or partial file (use fs.WriteAtomic)", e.what, firstNonEmpty(e.desc, s.render(e.key)))
			}
		}
	}
	slices.SortStableFunc(writes, func(a, b event) int { return cmp.Compare(s.c.callStart(a.instr), s.c.callStart(b.instr)) })
	done := make(map[string]bool)
	var found []finding
	for _, w := range writes {
		// one finding per file, and one more for each call of a helper
		// that saves the document again after a reported one: what it
		// writes is as stale (the calls that make one write, an open, an
		// encode and a close, are one)
		if done[w.key] && !(s.savesWhole(w) && slices.ContainsFunc(found, func(f finding) bool {
			return f.w.key == w.key && f.w.instr != w.instr && s.savesWhole(f.w) && order.reaches(f.w.instr, w.instr)
		})) {
			continue
		}
		for _, r := range reads {
			if debugFn != "" && s.fn.Name() == debugFn && r.key == w.key {
				fmt.Fprintf(os.Stderr, "pair %s -> %s: reaches %v protected %v refill %v\n", r.instr, w.instr,
					order.reaches(r.instr, w.instr), order.protected(r.instr, w.instr), s.refill(order, r, w))
			}
			if r.key != w.key || r.instr == w.instr || !order.reaches(r.instr, w.instr) || order.protected(r.instr, w.instr) ||
				s.refill(order, r, w) {
				continue
			}
			if !s.concurrent(order, w) {
				break
			}
			done[w.key] = true
			found = append(found, finding{r: r, w: w})
			break
		}
	}
	s.reportRMW(found)
	s.checkStale(order, s.withAlts(reads), s.withAlts(writes), done)
	// a decision is its own finding, at another call than a write-back's
	decided := make(map[string]bool)
	for _, f := range found {
		decided[f.w.key+"\x00"+fmt.Sprint(f.w.instr.Pos())] = true
	}
	s.checkDecisions(order, reads, decided)
	s.checkSelfSaves(order, reads, done)
}

// savesWhole reports whether the write w is made by a call of a function of
// the program (a helper that saves the document), not of a library's file
// API (one step of a write).
func (s *fnState) savesWhole(w event) bool {
	fn := w.instr.Common().StaticCallee()
	if fn == nil {
		return false
	}
	obj, ok := fn.Object().(*types.Func)
	return ok && models[funcKey(obj.Origin())] == nil && !isStd(obj.Pkg())
}

// checkDecisions reports a decision on a first read followed by a call of
// a function that reads the file again and writes it back (under a lock
// of its own, or not): what the first read decided may no longer hold
// when the callee writes.
func (s *fnState) checkDecisions(order *order, reads []event, done map[string]bool) {
	for _, c := range s.events {
		if c.kind != evCycle || done[c.key] || done[c.key+"\x00"+fmt.Sprint(c.instr.Pos())] || !s.concurrent(order, c) {
			continue
		}
		for _, r := range reads {
			if r.key != c.key || r.instr == c.instr || !order.reaches(r.instr, c.instr) || order.protected(r.instr, c.instr) ||
				s.refill(order, r, c) || !s.holdsDocument(r, c.key) || libraryDoc(c.key) && !s.skippable(r.instr, c.instr) {
				continue
			}
			done[c.key] = true
			readPos := s.readPos(r)
			s.c.reportf(s.c.eventPos(c), "read-modify-write of %s without a lock: read at line %d%s and decided on, "+
				"then read again and written back here%s, which acts on the first read's state though it may have changed "+
				"(decide inside the function that changes it: use %s)", s.fileName(c.key, c.desc, r.desc),
				s.c.pass.Fset.Position(readPos).Line, s.c.callNameAt(readPos, r.instr),
				s.c.callNameAt(s.c.eventPos(c), c.instr), s.format(finding{r: r, w: c}).fix(false))
			break
		}
	}
}

// skippable reports whether the function can return after a without
// calling b: b is made on a condition (what was read at a, for a library
// instance's document, whose getters are the decision).
func (s *fnState) skippable(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() {
		return false
	}
	seen := make(map[*ssa.BasicBlock]bool)
	stack := []*ssa.BasicBlock{a.Block()}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] || x == b.Block() {
			continue
		}
		seen[x] = true
		if len(x.Succs) == 0 {
			return true
		}
		stack = append(stack, x.Succs...)
	}
	return false
}

// holdsDocument reports whether the read r gives the function file k's
// document: a structured value decoded from it among the read call's
// results or the arguments it fills, on which the function can decide (a
// check that returns only an error, or a name taken out of the document,
// is no such value).
func (s *fnState) holdsDocument(r event, k string) bool {
	if libraryDoc(k) {
		return true // the instance holds it, and its getters decide on it (see decides)
	}
	vals := callArgs(r.instr.Common())
	if call, ok := r.instr.(*ssa.Call); ok {
		vals = append(vals, call)
		if call.Referrers() != nil {
			for _, ref := range *call.Referrers() {
				if ex, ok := ref.(*ssa.Extract); ok {
					vals = append(vals, ex)
				}
			}
		}
	}
	for _, v := range vals {
		if v == nil {
			continue
		}
		switch valueType(v).Underlying().(type) {
		case *types.Basic, *types.Tuple, *types.Signature:
			continue
		}
		for _, a := range s.atomsOf(v) {
			if a.Kind == aDecoded && a.Key == k {
				return true
			}
		}
	}
	return false
}

// refill reports whether w is reached from r only where the read failed
// (the file was missing or unreadable) or gave no document (a nil
// pointer, or a false "found" result): a cache filled after a miss, or a document created when there
// was none, which writes back nothing read.
func (s *fnState) refill(order *order, r, w event) bool {
	for _, at := range []ssa.CallInstruction{r.instr, s.readAt[r.key]} {
		if at == nil || at == w.instr || !order.reaches(at, w.instr) {
			continue // the content came from elsewhere, or later
		}
		for _, ok := range []*ssa.BasicBlock{order.successBlock(at), order.presentBlock(at), order.foundBlock(at)} {
			if ok != nil && ok.Parent() == s.fn && !order.reachesBlock(ok, w.instr.Block()) {
				return true
			}
		}
	}
	return false
}

// concurrent applies the policy for test files: in a _test.go file, a write
// is reported only when goroutines may run meanwhile (the function is
// started by a go statement, or starts one before the write); a write
// before any goroutine starts is the set-up of a fixture.
func (s *fnState) concurrent(order *order, e event) bool {
	if !s.c.isTestFile(e.instr.Pos()) || s.c.goes[s.fn] {
		return true
	}
	if _, ok := e.instr.(*ssa.Go); ok {
		return true // made by the goroutine it starts
	}
	for _, b := range s.fn.Blocks {
		for _, instr := range b.Instrs {
			if g, ok := instr.(*ssa.Go); ok && order.reaches(g, e.instr) {
				return true
			}
		}
	}
	return false
}

// eventPos returns where an event is reported.
func (c *checker) eventPos(e event) token.Pos {
	if e.pos.IsValid() {
		return e.pos
	}
	return c.callStart(e.instr)
}

// callStart returns where the call expression of instr starts.
func (c *checker) callStart(instr ssa.Instruction) token.Pos {
	if ci, ok := instr.(ssa.CallInstruction); ok {
		if call := c.calls[ci.Common().Pos()]; call != nil {
			return call.Pos()
		}
	}
	return instr.Pos()
}

// argSource returns the source of argument i of a call (the receiver
// first for a method), or "".
func (c *checker) argSource(instr ssa.CallInstruction, i, n int) string {
	call := c.calls[instr.Common().Pos()]
	if call == nil {
		return ""
	}
	if isMethodCall(instr.Common()) {
		if i == 0 {
			if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
				return types.ExprString(sel.X)
			}
			return ""
		}
		i--
	}
	if i < len(call.Args) {
		return types.ExprString(call.Args[i])
	}
	return ""
}

func isMethodCall(cc *ssa.CallCommon) bool {
	if cc.IsInvoke() {
		return true
	}
	sig, _ := cc.Value.Type().Underlying().(*types.Signature)
	if fn := cc.StaticCallee(); fn != nil {
		sig = fn.Signature
	}
	return sig != nil && sig.Recv() != nil
}

// callWhat says what a call that truncates a file does, for messages:
// "save truncates" for a call of save whose body truncates.
func (c *checker) callWhat(instr ssa.CallInstruction, what string) string {
	if call := c.calls[instr.Common().Pos()]; call != nil {
		return types.ExprString(call.Fun) + " truncates"
	}
	return what
}

// source returns how value v is written at a call: the source of the
// argument it is.
func (c *checker) source(v ssa.Value, instr ssa.CallInstruction) string {
	args := callArgs(instr.Common())
	for i, a := range args {
		if a == v {
			return c.argSource(instr, i, len(args))
		}
	}
	return ""
}
