package statuslint

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// fill decodes, at a call of a function whose parameter p reaches code the
// analysis cannot see, text or bytes the call is given into argument p.
func (s *fnState) fill(instr ssa.CallInstruction, args []ssa.Value, p int) {
	for _, a := range s.atomsOf(args[p]) {
		if a.Kind == aParam {
			s.fills[a.Param] = true
		}
	}
	if !decodeTarget(valueType(args[p])) {
		return
	}
	var in atoms
	for i, a := range args {
		if i != p && a != nil && contentType(a.Type()) {
			in.add(contentOf(s.atomsOf(a), s.c).filter(func(a atom) bool { return a.Kind == aContent })...)
		}
	}
	if len(in) > 0 {
		s.store(args[p], s.decode(instr, in))
	}
}

// decode returns the decoded form of the content among in, and records
// each file decoded as read at instr.
func (s *fnState) decode(instr ssa.CallInstruction, in atoms) atoms {
	var out atoms
	for _, a := range in {
		switch a.Kind {
		case aContent, aDecoded:
			out.add(atom{Kind: aDecoded, Key: a.Key})
			if a.Kind == aContent {
				s.event(evRead, a.Key, instr, s.descs[a.Key])
			}
		case aHandle:
			if s.c.readable(a.Flag) {
				out.add(atom{Kind: aDecoded, Key: a.Key})
				s.event(evRead, a.Key, instr, s.descs[a.Key])
			}
		case aParam:
			out.add(atom{Kind: aDecParam, Param: a.Param})
			if s.mayHoldContent(a.Param) {
				s.event(evRead, viaMarker(a.Param), instr, "")
			}
		case aDecParam:
			out.add(a)
		}
	}
	return out
}

// opaque handles a call of code the analysis cannot see (the standard
// library beyond its models, an interface method with no implementation
// in sight, a function value of unknown origin): its results hold what it
// is given (a handle's content among it); it writes a handle it is given
// as an io.Writer; it fills buffers it is given with the content it is
// given; it decodes text or bytes it is given into a pointer, map or
// empty interface it is also given (a decoder such as yaml.Unmarshal).
func (s *fnState) opaque(instr ssa.CallInstruction, args []ssa.Value, sig *types.Signature) {
	var in atoms
	for _, a := range args {
		for _, at := range s.atomsOf(a) {
			switch at.Kind {
			case aFunc:
				continue
			case aHandle:
				if s.c.readable(at.Flag) {
					in.add(atom{Kind: aContent, Key: at.Key})
				}
			}
			in.add(at)
		}
	}
	if call, ok := instr.(*ssa.Call); ok {
		for i := range resultCount(call) {
			s.setResult(instr, i, in)
		}
	}
	params := paramTypes(sig, instr.Common().IsInvoke() || isMethodSig(sig), len(args))
	var text, targets []int
	for i, a := range args {
		if a == nil {
			continue
		}
		variadic := sig != nil && sig.Variadic() && i >= len(params)-1
		if i < len(params) && s.c.writerType(params[i]) {
			s.writeVia(instr, s.atomsOf(a), s.c.argSource(instr, i, len(args)))
		}
		for _, at := range s.atomsOf(a) {
			if at.Kind == aParam {
				s.fills[at.Param] = true
			}
		}
		if variadic {
			continue
		}
		switch {
		case contentType(a.Type()) && bufferType(a.Type()):
			s.store(a, contentOf(in, s.c))
		case contentType(a.Type()):
			text = append(text, i)
		case decodeTarget(valueType(a)):
			targets = append(targets, i)
		}
	}
	if len(text) == 0 || len(targets) == 0 {
		return
	}
	var content atoms
	for _, i := range text {
		content.add(contentOf(s.atomsOf(args[i]), s.c).filter(func(a atom) bool { return a.Kind == aContent })...)
	}
	if len(content) == 0 {
		return
	}
	dec := s.decode(instr, content)
	for _, i := range targets {
		s.store(args[i], dec)
	}
}

// contentOf returns the content among as: text or bytes of files, readable
// handles as their content, and parameters.
func contentOf(as atoms, c *checker) atoms {
	var out atoms
	for _, a := range as {
		switch a.Kind {
		case aContent, aParam:
			out.add(a)
		case aHandle:
			if c.readable(a.Flag) {
				out.add(atom{Kind: aContent, Key: a.Key})
			}
		}
	}
	return out
}

// writeVia records a write of the files whose writable handles as holds.
func (s *fnState) writeVia(instr ssa.CallInstruction, as atoms, desc string) {
	for _, a := range as {
		switch a.Kind {
		case aHandle:
			if s.c.writable(a.Flag) {
				s.event(evWrite, a.Key, instr, firstNonEmpty(s.descs[a.Key], desc))
			}
		case aParam:
			// what a parameter holds reaches this write: the file, if any,
			// is the caller's to name
			if s.mayHoldHandle(a.Param) && !a.NoHandle {
				s.event(evWrite, viaMarker(a.Param), instr, desc)
			}
		}
	}
}

// paramType returns the type of parameter (or free variable) i.
func (s *fnState) paramType(i int) types.Type {
	switch {
	case i < 0:
		return nil
	case i < len(s.fn.Params):
		return s.fn.Params[i].Type()
	case i-len(s.fn.Params) < len(s.fn.FreeVars):
		return s.fn.FreeVars[i-len(s.fn.Params)].Type()
	}
	return nil
}

// mayHoldContent reports whether parameter i can bring a file's content:
// text, bytes, or a handle.
func (s *fnState) mayHoldContent(i int) bool {
	t := s.paramType(i)
	return t != nil && (contentType(t) || s.mayHoldHandle(i))
}

// mayHoldHandle reports whether what parameter i holds can include a file
// handle: an interface, an *os.File, or a value with one in it.
func (s *fnState) mayHoldHandle(i int) bool {
	return s.c.holdsHandle(s.paramType(i))
}

// readVia stores the content of the readable handles as holds into dst.
func (s *fnState) readVia(dst ssa.Value, as atoms) {
	s.store(dst, contentOf(as, s.c))
}

// fileMethod handles a call of a method of a file handle through an
// interface (io.Writer, an afero or billy File): what *os.File's method of
// that name does, for the handles the receiver holds.
func (s *fnState) fileMethod(instr ssa.CallInstruction, name string, args []ssa.Value) bool {
	if len(args) == 0 {
		return false
	}
	recv := s.atomsOf(args[0])
	if !recv.has(aHandle) && !recv.has(aParam) {
		return false
	}
	switch fileMethods[name] {
	case fmWrite:
		s.writeVia(instr, recv, s.c.argSource(instr, 0, len(args)))
	case fmRead:
		if len(args) > 1 {
			s.readVia(args[1], recv)
		}
	case fmSame:
		s.setResult(instr, 0, recv)
	default:
		return false
	}
	return true
}
