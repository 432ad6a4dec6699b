package statuslint

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// decodable reports whether argument i, by its type, can be a document to
// decode: text, bytes, or a file-like value.
func (s *fnState) decodable(args []ssa.Value, i int) bool {
	if i >= len(args) || args[i] == nil {
		return false
	}
	t := args[i].Type()
	return contentType(t) || fileLike(t, make(map[types.Type]bool))
}

// skipVia reports whether, in a call through an interface, an access to
// the file behind an argument is to be ignored: every implementation in
// sight is applied, so such an access counts only where the argument is
// a file-like value (a reader or writer, an *os.File), not for any
// interface whose implementations include one that writes what it is
// given. Nor does a file that an implementation names by a field of its
// receiver when the receiver is a stream (a response body, a pipe): an
// implementation that keeps a path and writes it on Close is another
// stream than the one this call closes.
func (s *fnState) skipVia(k string, args []ssa.Value) bool {
	if !s.union {
		return false
	}
	i, via := viaIndex(k)
	if !via {
		return len(args) > 0 && args[0] != nil && strings.Contains(k, receiverMarker) && s.c.stream(args[0].Type())
	}
	return i >= len(args) || args[i] == nil || !fileLike(args[i].Type(), make(map[types.Type]bool))
}

// receiverMarker is parameter 0's marker in a template.
var receiverMarker = paramMarker(0)

// apply makes a call do what the callee's fact f says, with args in place
// of the callee's parameters (nil where unknown). n is the number of
// arguments the call passes (the rest are free variables of a closure).
func (s *fnState) apply(instr ssa.CallInstruction, f *fnFact, args []ssa.Value, n int, inner *fnState) {
	for i, res := range f.Results {
		as := s.substAtoms(instr, res, args)
		s.noteReads(instr, as)
		s.setResult(instr, i, as)
	}
	for _, st := range f.Stores {
		if st.Param < len(args) && args[st.Param] != nil {
			s.store(args[st.Param], s.substAtoms(instr, st.Atoms, args))
		}
	}
	for _, gs := range f.Globals {
		if gs.g.Pkg == s.c.pkg {
			s.addTo(object{v: gs.g}, s.substAtoms(instr, gs.Atoms, args))
		}
	}
	for _, k := range f.Reads {
		if s.skipVia(k, args) {
			continue
		}
		for _, key := range s.substKeys(k, args, evRead) {
			s.event(evRead, key, instr, s.describe(instr, k, args, f.Recv))
			s.within(inner, evRead, k)
		}
	}
	for _, k := range f.Rereads {
		if s.skipVia(k, args) {
			continue
		}
		for _, key := range s.substKeys(k, args, evRead) {
			if key != "" {
				s.events = append(s.events, event{kind: evRead, key: key, instr: instr, after: true,
					desc: s.describe(instr, k, args, f.Recv)})
			}
		}
	}
	for _, k := range f.Writes {
		if s.skipVia(k, args) {
			continue
		}
		// through an interface, a write of what a file-like argument holds
		// is made whatever the implementation; one by name may not be
		union := s.union
		if _, via := viaIndex(k); via {
			s.union = false
		}
		for _, key := range s.substKeys(k, args, evWrite) {
			s.event(evWrite, key, instr, s.describe(instr, k, args, f.Recv))
			s.within(inner, evWrite, k)
		}
		s.ownFile(instr, f, k, args)
		s.union = union
	}
	union := s.union
	s.union = true
	for _, k := range f.MayWrites {
		if s.skipVia(k, args) {
			continue
		}
		for _, key := range s.substKeys(k, args, evWrite) {
			s.event(evWrite, key, instr, s.describe(instr, k, args, f.Recv))
		}
	}
	s.union = union
	for _, t := range f.Truncs {
		if s.skipVia(t.Key, args) {
			continue
		}
		flag := s.substFlag(t.Flag, args)
		for _, key := range s.substKeys(t.Key, args, evWrite) {
			s.truncate(instr, key, s.c.callWhat(instr, t.What), flag, s.describe(instr, t.Key, args, f.Recv))
		}
	}
	for _, t := range f.InPlace {
		if s.skipVia(t.Key, args) {
			continue
		}
		for _, key := range s.substKeys(t.Key, args, evWrite) {
			what := t.What
			if inner == nil {
				what = s.c.callWhat(instr, t.What)
			}
			s.inPlace(instr, key, what, s.describe(instr, t.Key, args, f.Recv))
			s.within(inner, evInPlace, t.Key)
		}
	}
	for _, k := range f.Cycles {
		if s.union {
			break // what some implementation does is no decision of this caller's
		}
		for _, key := range s.substKeys(k, args, evWrite) {
			s.events = append(s.events, event{kind: evCycle, key: key, instr: instr, desc: s.describe(instr, k, args, f.Recv)})
		}
	}
	for _, l := range f.Locks {
		s.lock(instr, lockOp{How: s.substFlag(l.How, args), Unlock: l.Unlock})
	}
	for _, p := range f.Fills {
		if p < n && p < len(args) && args[p] != nil {
			s.fill(instr, args, p)
		}
	}
	for _, p := range f.Moves {
		if p < len(args) && args[p] != nil {
			s.renamed[s.argTerm(args[p])] = true
		}
	}
}

// ownFile records, for a method's write to a path that its receiver keeps
// in a field of its own (template k is $recv.Field), a write of the file
// the receiver was decoded from: a configuration that remembers where it
// was loaded from is saved there. A path deeper in a value, or in a
// parameter that is not the receiver, is another file that the value
// names (a container's ID file named in its options).
func (s *fnState) ownFile(instr ssa.CallInstruction, f *fnFact, k string, args []ssa.Value) {
	if !f.Recv || len(args) == 0 || args[0] == nil || !ownField(k) {
		return
	}
	for _, a := range s.atomsOf(args[0]) {
		if a.Kind == aDecoded && isTemplate(a.Key) {
			s.event(evWrite, a.Key, instr, "")
		}
	}
}

// within makes the last event recorded point where the function literal
// whose analysis is inner makes it.
func (s *fnState) within(inner *fnState, kind eventKind, key string) {
	if inner == nil || len(s.events) == 0 {
		return
	}
	for _, e := range inner.events {
		if e.kind == kind && e.key == key {
			last := &s.events[len(s.events)-1]
			last.pos = s.c.eventPos(e)
			if last.desc == "" {
				last.desc = e.desc
			}
			return
		}
	}
}

// noteReads remembers where the content of files among as was read.
func (s *fnState) noteReads(instr ssa.CallInstruction, as atoms) {
	for _, a := range as {
		switch a.Kind {
		case aContent, aDecoded, aHandle:
			if _, ok := s.readAt[a.Key]; !ok {
				s.readAt[a.Key] = instr
			}
		}
	}
}

// substAtoms returns what atoms of a fact stand for at a call.
func (s *fnState) substAtoms(instr ssa.CallInstruction, in atoms, args []ssa.Value) atoms {
	var out atoms
	for _, a := range in {
		switch a.Kind {
		case aParam:
			if a.NoHandle {
				out.add(s.c.withoutHandles(s.argAtoms(args, a.Param))...)
				continue
			}
			out.add(s.argAtoms(args, a.Param)...)
		case aDecParam:
			if s.union && !s.decodable(args, a.Param) {
				// some implementation decodes what it is given, but this
				// argument is no text, bytes or file
				out.add(s.argAtoms(args, a.Param)...)
				continue
			}
			out.add(s.decode(instr, s.argAtoms(args, a.Param))...)
		case aFunc:
			out.add(a)
		default:
			key, ok := s.substKey(a.Key, args)
			if !ok {
				continue
			}
			out.add(atom{Kind: a.Kind, Key: key, Flag: s.substFlag(a.Flag, args)})
		}
	}
	return out
}

// substKey fills in a template with the keys of a call's arguments.
func (s *fnState) substKey(t string, args []ssa.Value) (string, bool) {
	return substitute(t, func(i int) (string, bool) {
		if i < 0 || i >= len(args) || args[i] == nil {
			return "", false
		}
		return s.argTerm(args[i]), true
	})
}

// argTerm keys an argument; a captured variable (an allocation passed as
// a closure's binding) stands for its value.
func (s *fnState) argTerm(v ssa.Value) string {
	if a, ok := v.(*ssa.Alloc); ok && a.Heap {
		return s.loadTerm(a)
	}
	return s.term(v)
}

// substKeys returns the keys a template stands for at a call: a via key
// stands for the files whose handles (for a write) or content (for a read)
// the argument holds.
func (s *fnState) substKeys(t string, args []ssa.Value, kind eventKind) []string {
	if i, ok := viaIndex(t); ok {
		return s.viaKeys(s.argAtoms(args, i), kind)
	}
	if k, ok := s.substKey(t, args); ok {
		return []string{k}
	}
	return nil
}

// viaKeys returns the files that as gives access to: for a write, the
// writable handles; for a read, content and readable handles; and the
// parameters that may bring either.
func (s *fnState) viaKeys(as atoms, kind eventKind) []string {
	var out []string
	for _, a := range as {
		switch {
		case a.Kind == aHandle && kind == evWrite && s.c.writable(a.Flag),
			a.Kind == aHandle && kind == evRead && s.c.readable(a.Flag),
			a.Kind == aContent && kind == evRead:
			out = append(out, a.Key)
		case a.Kind == aParam:
			if s.mayHoldHandle(a.Param) && (kind == evRead || !a.NoHandle) || kind == evRead && contentType(s.paramType(a.Param)) {
				out = append(out, viaMarker(a.Param))
			}
		}
	}
	return out
}

// substFlag resolves an integer argument at a call.
func (s *fnState) substFlag(a intArg, args []ssa.Value) intArg {
	if !a.FromParam {
		return a
	}
	if a.Param >= len(args) || args[a.Param] == nil {
		return intArg{}
	}
	return s.intArg(args[a.Param])
}

// intArg returns what is known of an integer value: a constant, or the
// value of a parameter.
func (s *fnState) intArg(v ssa.Value) intArg {
	for range maxTermDeep {
		switch x := v.(type) {
		case *ssa.Const:
			if i, ok := constInt(x); ok {
				return intArg{Known: true, Val: i}
			}
			return intArg{}
		case *ssa.Parameter, *ssa.FreeVar:
			return intArg{FromParam: true, Param: s.index[x]}
		case *ssa.Convert:
			v = x.X
		case *ssa.ChangeType:
			v = x.X
		case *ssa.BinOp:
			l, r := s.intArg(x.X), s.intArg(x.Y)
			if l.Known && r.Known {
				switch x.Op.String() {
				case "|":
					return intArg{Known: true, Val: l.Val | r.Val}
				case "&":
					return intArg{Known: true, Val: l.Val & r.Val}
				case "&^":
					return intArg{Known: true, Val: l.Val &^ r.Val}
				}
			}
			return intArg{}
		default:
			return intArg{}
		}
	}
	return intArg{}
}

// describe returns how the path of template t is written at the call: the
// source of the argument it names first.
func (s *fnState) describe(instr ssa.CallInstruction, t string, args []ssa.Value, recv bool) string {
	i, ok := firstParam(t, recv)
	if v, via := viaIndex(t); via {
		i, ok = v, true
	}
	if !ok {
		return ""
	}
	return s.c.argSource(instr, i, len(args))
}
