package statuslint

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A document type loads itself: one method reads the file a field of its
// receiver names and decodes it into the receiver (a configuration's
// Read), another writes the receiver back to that file (its Write or
// Save). A program loads such an object once, at start-up, keeps it (in a
// state struct, behind an interface, as the receiver of its handlers) and
// a handler saves it later: the save writes back a document read in
// another call chain. A call of the saving method on an object that the
// function did not make (one it was given, or reached through what it was
// given) and did not load itself is such a write-back.

// A selfSave is a call of a method that saves its receiver to the file
// that another method of its type loads it from.
type selfSave struct {
	instr  ssa.CallInstruction
	key    string // the file, at the call
	desc   string
	loader string // the loading method, for the message
	recv   ssa.Value
	method string        // the saving method's name
	callee *ssa.Function // the method called, if static
}

// noteSelfSave records, for a call of method m with fact f, the files it
// writes that a method of its receiver's type loads the receiver from.
func (s *fnState) noteSelfSave(instr ssa.CallInstruction, m *types.Func, callee *ssa.Function, f *fnFact, args []ssa.Value) {
	if m == nil || !f.Recv || len(args) == 0 || args[0] == nil {
		return
	}
	for _, k := range f.Writes {
		if !recvPath(k) {
			continue
		}
		loader := s.c.selfLoader(m, k)
		if loader == "" {
			continue
		}
		key, ok := s.substKey(k, args)
		if !ok {
			continue
		}
		s.selfSaves = append(s.selfSaves, selfSave{instr: instr, key: key, desc: s.describe(instr, k, args, true),
			loader: loader, recv: args[0], method: m.Name(), callee: callee})
	}
}

// recvPath reports whether template k is a path made from the receiver's
// fields alone.
func recvPath(k string) bool {
	return strings.Contains(k, receiverMarker+".") && strings.Count(k, paramDelim) == 2*strings.Count(k, receiverMarker)
}

// selfLoader returns the method of m's receiver type, other than m, that
// reads file k and stores what it decodes in its receiver, or "".
func (c *checker) selfLoader(m *types.Func, k string) string {
	sig, _ := m.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return ""
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok {
		return ""
	}
	mset := types.NewMethodSet(types.NewPointer(named))
	for i := range mset.Len() {
		o, ok := mset.At(i).Obj().(*types.Func)
		if !ok || o == m || o.Origin() == m.Origin() {
			continue
		}
		f := c.importedFact(o)
		if f == nil || !slices.Contains(f.Reads, k) {
			continue
		}
		for _, st := range f.Stores {
			if st.Param != 0 {
				continue
			}
			for _, a := range st.Atoms {
				if a.Kind == aDecoded && a.Key == k {
					return named.Obj().Name() + "." + o.Name()
				}
			}
		}
	}
	return ""
}

// longLived reports whether v is reached from what the function was given
// (a parameter, a captured variable, a package-level variable), through
// fields, method results and conversions: an object the function did not
// make.
func longLived(v ssa.Value, depth int) bool {
	if depth > maxTermDeep {
		return false
	}
	switch v := v.(type) {
	case *ssa.Parameter, *ssa.FreeVar, *ssa.Global:
		return true
	case *ssa.UnOp:
		return longLived(v.X, depth+1)
	case *ssa.FieldAddr:
		return longLived(v.X, depth+1)
	case *ssa.Field:
		return longLived(v.X, depth+1)
	case *ssa.ChangeType:
		return longLived(v.X, depth+1)
	case *ssa.MakeInterface:
		return longLived(v.X, depth+1)
	case *ssa.ChangeInterface:
		return longLived(v.X, depth+1)
	case *ssa.TypeAssert:
		return longLived(v.X, depth+1)
	case *ssa.Extract:
		return longLived(v.Tuple, depth+1)
	case *ssa.Call:
		// a getter of what the function was given (s.Config())
		cc := v.Common()
		if isMethodCall(cc) {
			args := callArgs(cc)
			return len(args) > 0 && args[0] != nil && longLived(args[0], depth+1)
		}
	case *ssa.Phi:
		for _, e := range v.Edges {
			if longLived(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// forwards reports whether the save is a method's call of the method of
// the same name of a value its receiver wraps (a mock or decorator that
// forwards Write): the caller of the wrapper is the one that saves.
func (s *fnState) forwards(ss selfSave) bool {
	return s.fn.Signature.Recv() != nil && s.fn.Name() == ss.method
}

// savesInside reports whether fn, a method of this package, saves its own
// receiver by a call of another method of its type: that call is reported
// there, once, rather than at each caller up the chain.
func (c *checker) savesInside(fn *ssa.Function) bool {
	if fn == nil || len(fn.Params) == 0 || fn.Signature.Recv() == nil {
		return false
	}
	st := c.states[fn]
	if st == nil {
		return false
	}
	for _, ss := range st.selfSaves {
		if longLived(ss.recv, 0) && !st.forwards(ss) {
			return true
		}
	}
	return false
}

// checkSelfSaves reports the saves of a long-lived document object that
// the function did not load itself (done: files already reported).
func (s *fnState) checkSelfSaves(order *order, reads []event, done map[string]bool) {
	var found []finding
	for _, ss := range s.selfSaves {
		if done[ss.key] || !longLived(ss.recv, 0) || s.forwards(ss) || s.c.savesInside(ss.callee) {
			continue
		}
		w := event{kind: evWrite, key: ss.key, instr: ss.instr, desc: ss.desc}
		if !s.concurrent(order, w) {
			continue
		}
		readHere := false
		for _, r := range reads {
			readHere = readHere || r.key == ss.key
		}
		if readHere {
			continue // its own cycle, reported (or locked) as such
		}
		done[ss.key] = true
		found = append(found, finding{r: event{kind: evRead, key: ss.key, instr: ss.instr, desc: ss.loader}, w: w})
	}
	s.reportStale(found)
}
