package statuslint

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// fileLike reports whether a value of type t is a file handle or an
// interface through which one is read or written.
func fileLike(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if isOSFile(t) || isViper(t) {
		return true
	}
	switch tt := t.Underlying().(type) {
	case *types.Interface:
		for i := range tt.NumMethods() {
			if k := fileMethods[tt.Method(i).Name()]; k == fmWrite || k == fmRead {
				return true
			}
		}
	case *types.Pointer:
		return fileLike(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if tt.Field(i).Embedded() && fileLike(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// stream reports whether t is a reader or a writer: it has io.Reader's
// Read or io.Writer's Write (an *os.File, a response body, a pipe). The
// answer depends on t alone: it is kept.
func (c *checker) stream(t types.Type) bool {
	if t == nil {
		return false
	}
	is, ok := c.streams[t]
	if !ok {
		is = types.Implements(t, ioReader) || types.Implements(t, ioWriter)
		c.streams[t] = is
	}
	return is
}

// ioReader and ioWriter are io.Reader and io.Writer, made here so that no
// package has to import io for them to be known.
var ioReader, ioWriter = streamIface("Read"), streamIface("Write")

func streamIface(name string) *types.Interface {
	bytes := types.NewSlice(types.Typ[types.Byte])
	sig := types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewParam(0, nil, "p", bytes)),
		types.NewTuple(types.NewParam(0, nil, "n", types.Typ[types.Int]),
			types.NewParam(0, nil, "err", types.Universe.Lookup("error").Type())), false)
	return types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, name, sig)}, nil).Complete()
}

// isOSFile reports whether t is os.File.
func isOSFile(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "os" && n.Obj().Name() == "File"
}

// holdsHandle reports whether a value of type t can hold an open file: an
// *os.File, or an interface, anywhere in it. The answer depends on t alone,
// and the same types are asked about again in every round: it is kept.
func (c *checker) holdsHandle(t types.Type) bool {
	if t == nil {
		return false
	}
	h, ok := c.handles[t]
	if !ok {
		h = holdsHandle(t, make(map[types.Type]bool))
		c.handles[t] = h
	}
	return h
}

func holdsHandle(t types.Type, seen map[types.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	if isOSFile(t) {
		return true
	}
	switch tt := t.Underlying().(type) {
	case *types.Interface:
		return true
	case *types.Pointer:
		return holdsHandle(tt.Elem(), seen)
	case *types.Slice:
		return holdsHandle(tt.Elem(), seen)
	case *types.Array:
		return holdsHandle(tt.Elem(), seen)
	case *types.Map:
		return holdsHandle(tt.Key(), seen) || holdsHandle(tt.Elem(), seen)
	case *types.Chan:
		return holdsHandle(tt.Elem(), seen)
	case *types.Struct:
		for i := range tt.NumFields() {
			if holdsHandle(tt.Field(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// paramTypes returns the types of a call's parameters in the order of its
// arguments (the receiver first for a method).
func paramTypes(sig *types.Signature, method bool, n int) []types.Type {
	if sig == nil {
		return nil
	}
	var out []types.Type
	if method && sig.Recv() != nil {
		out = append(out, sig.Recv().Type())
	} else if method {
		out = append(out, nil)
	}
	for i := range sig.Params().Len() {
		out = append(out, sig.Params().At(i).Type())
	}
	return out
}

func isMethodSig(sig *types.Signature) bool { return sig != nil && sig.Recv() != nil }

// valueType returns the type of the value an argument carries: for a
// value converted to an interface, its concrete type.
func valueType(v ssa.Value) types.Type {
	if mi, ok := v.(*ssa.MakeInterface); ok {
		return mi.X.Type()
	}
	return v.Type()
}

// decodeTarget reports whether a value of type t can receive a decoded
// document: a pointer to something other than a number, text, bytes, a
// function or a type of the standard library (a parser's token.FileSet is
// no document), that is not itself a reader or writer; a map; an empty
// interface.
func decodeTarget(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Pointer:
		if n, ok := types.Unalias(tt.Elem()).(*types.Named); ok && n.Obj().Pkg() != nil && isStd(n.Obj().Pkg()) {
			return false
		}
		switch elem := tt.Elem().Underlying().(type) {
		case *types.Basic, *types.Signature, *types.Chan:
			return false
		case *types.Slice:
			if isByte(elem.Elem()) {
				return false
			}
		}
		return !implements(t, readerIface) && !implements(t, writerIface)
	case *types.Map:
		return true
	case *types.Interface:
		return tt.Empty()
	}
	return false
}

// contentType reports whether a value of type t can carry a file's content
// into a decoder: text or bytes (a reader's content is read by a model or
// a body the analysis sees).
func contentType(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		return tt.Info()&types.IsString != 0
	case *types.Slice:
		return isByte(tt.Elem())
	case *types.Pointer:
		return bufferType(t)
	}
	return false
}

// bufferType reports whether t is a buffer a call can fill: bytes, or a
// pointer to a struct that is an io.Writer and a fmt.Stringer
// (bytes.Buffer, strings.Builder).
func bufferType(t types.Type) bool {
	if t == nil {
		return false
	}
	switch tt := t.Underlying().(type) {
	case *types.Slice:
		return isByte(tt.Elem())
	case *types.Pointer:
		_, isStruct := tt.Elem().Underlying().(*types.Struct)
		return isStruct && implements(t, writerIface) && implements(t, stringerIface)
	}
	return false
}

// implements reports whether a value of type t, or an addressable one, has
// the methods of iface (io.Reader, io.Writer, fmt.Stringer below): what a
// value can do is told by its method set, signatures included.
func implements(t types.Type, iface *types.Interface) bool {
	if types.Implements(t, iface) {
		return true
	}
	_, isPtr := t.Underlying().(*types.Pointer)
	return !isPtr && !types.IsInterface(t) && types.Implements(types.NewPointer(t), iface)
}

// The interfaces io.Reader, io.Writer and fmt.Stringer, built here because
// the package analysed need not import io or fmt.
var (
	readerIface   = oneMethod("Read", bytesParam, intErrResults)
	writerIface   = oneMethod("Write", bytesParam, intErrResults)
	stringerIface = oneMethod("String", nil, types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Typ[types.String])))

	bytesParam    = types.NewTuple(types.NewParam(token.NoPos, nil, "p", types.NewSlice(types.Typ[types.Byte])))
	intErrResults = types.NewTuple(
		types.NewParam(token.NoPos, nil, "n", types.Typ[types.Int]),
		types.NewParam(token.NoPos, nil, "err", types.Universe.Lookup("error").Type()))
)

func oneMethod(name string, params, results *types.Tuple) *types.Interface {
	sig := types.NewSignatureType(nil, nil, nil, params, results, false)
	return types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, name, sig)}, nil).Complete()
}

func isByte(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

func isError(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}
