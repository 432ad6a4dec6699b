package statuslint

import (
	"go/types"
)

// A parser that builds its result rather than filling memory it is given
// (todo.Parse(r) []Todo, a scanner of "key = value" lines returning a
// map) is a decode too: a function whose result is a structured value
// made from content it was given or read returns that content decoded.
// Only the type of the result decides, never a name: text, bytes, a list
// of strings and scalars stay raw, so that a text rewrite (strings
// operations on raw content written back) and a one-value file (a pid read
// with strconv.Atoi) are not taken for documents.

// parsed turns what result i of the function holds into its decoded form
// when the result is structured: content of a file becomes that file
// decoded (and read, for the callers), what a parameter that brings bytes
// or a reader holds becomes that parameter decoded.
func (s *fnState) parsed(f *fnFact, i int) {
	if !f.Results[i].has(aContent) && !f.Results[i].has(aParam) ||
		!structured(s.fn.Signature.Results().At(i).Type()) {
		return
	}
	// a method of a reader that returns a structure (a Stat's FileInfo)
	// describes the reader; it does not parse it
	recv := s.fn.Signature.Recv() != nil
	var out atoms
	for _, a := range f.Results[i] {
		switch {
		case a.Kind == aContent:
			out.add(atom{Kind: aDecoded, Key: a.Key})
			f.Reads = append(f.Reads, a.Key)
		case a.Kind == aParam && readerType(s.paramType(a.Param)) && !(recv && a.Param == 0):
			out.add(atom{Kind: aDecParam, Param: a.Param})
		default:
			out.add(a)
		}
	}
	f.Results[i] = out
}

// readerType reports whether a parameter of type t brings a document to
// parse: bytes, or something to read from (a file, an io.Reader, a
// buffer). A string is taken for a value (a name, a namespace stored in a
// node), not a document; a writer brings nothing to read.
func readerType(t types.Type) bool {
	if t == nil {
		return false
	}
	if sl, ok := t.Underlying().(*types.Slice); ok && isByte(sl.Elem()) {
		return true
	}
	return isOSFile(t) || implements(t, readerIface)
}

// structured reports whether a value of type t is a structured document:
// a struct or a map, a pointer to one, or a slice or array of those. A
// type of the standard library (a bufio.Scanner) is no document, nor is a
// value through which a file is read or written, nor a struct that boxes
// an interface or bytes (a framework's Result{Value any, OK bool} holding
// the raw text, a decoder holding its reader).
func structured(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	switch tt := t.Underlying().(type) {
	case *types.Slice:
		t = tt.Elem()
	case *types.Array:
		t = tt.Elem()
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && isStd(n.Obj().Pkg()) {
		return false
	}
	switch t.Underlying().(type) {
	case *types.Map:
		return true
	case *types.Struct:
		if fileLike(types.NewPointer(t), make(map[types.Type]bool)) ||
			implements(t, readerIface) || implements(t, writerIface) {
			return false
		}
		return !boxes(t, make(map[types.Type]bool)) && carriesText(t, make(map[types.Type]bool))
	}
	return false
}

// carriesText reports whether a value of type t holds text or a map
// somewhere: what a parser takes out of a document. A structure of numbers
// made from bytes (a rune's properties, a header's sizes) measures its
// input; it does not parse a document.
func carriesText(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil && isStd(n.Obj().Pkg()) {
		return false // a time.Time is a value, whatever its Location holds
	}
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		return tt.Info()&types.IsString != 0
	case *types.Map:
		return true
	case *types.Pointer:
		return carriesText(tt.Elem(), seen)
	case *types.Slice:
		return carriesText(tt.Elem(), seen)
	case *types.Array:
		return carriesText(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if carriesText(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// boxes reports whether a struct of type t holds a value of interface type
// or bytes in a field, or in a field of a struct it holds or points to: a
// decoder or an encoder (its reader or writer some levels down), a file's
// description (its file system), a box of whatever it is given, a view of
// the bytes it was given (x/text's norm input).
func boxes(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch tt := t.Underlying().(type) {
	case *types.Interface:
		return true
	case *types.Slice:
		return isByte(tt.Elem()) // raw bytes carried as they are
	case *types.Pointer:
		return boxes(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if boxes(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}
