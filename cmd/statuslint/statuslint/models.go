package statuslint

import (
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Models say what calls do whose bodies are not analysed: the entries of
// the library table (library.go) and the methods of *os.File. A model is
// keyed by the function's identity (funcKey), never by a name alone.
var models = map[string]model{}

// A model applies what one function does at a call.
type model func(s *fnState, m *modelCall)

type modelCall struct {
	instr ssa.CallInstruction
	args  []ssa.Value // the receiver first for a method
	fn    *types.Func
}

func (m *modelCall) arg(i int) ssa.Value {
	if i >= 0 && i < len(m.args) {
		return m.args[i]
	}
	return nil
}

func init() {
	for _, e := range library {
		for _, pkg := range e.pkgs {
			for _, name := range e.names {
				models[key(pkg, name)] = e.model()
			}
		}
	}
	// Methods of *os.File.
	for name, kind := range fileMethods {
		models[key("os", "File."+name)] = func(s *fnState, m *modelCall) {
			recv := s.atomsOf(m.arg(0))
			switch kind {
			case fmWrite:
				s.writeVia(m.instr, recv, s.c.argSource(m.instr, 0, len(m.args)))
			case fmRead:
				if v := m.arg(1); v != nil {
					s.readVia(v, recv)
				}
			case fmSame:
				s.setResult(m.instr, 0, recv)
			}
		}
	}
}

func key(pkg, name string) string { return pkg + keySep + name }

// model returns what a call of the entry's functions does.
func (e libEntry) model() model {
	switch e.op {
	case opRead:
		return func(s *fnState, m *modelCall) {
			s.setResult(m.instr, 0, s.file(aContent, m.arg(e.path), m.instr, e.rootArg(m)))
		}
	case opReadDecoded:
		return func(s *fnState, m *modelCall) {
			path := m.arg(e.path)
			if e.store {
				path = s.storePath(path)
			}
			s.readDecoded(m, path)
		}
	case opWrite:
		return func(s *fnState, m *modelCall) { s.writeFile(m, m.arg(e.path), e.rootArg(m)) }
	case opWriteInPlace:
		return func(s *fnState, m *modelCall) {
			k := s.pathKey(m.arg(e.path), m.instr, e.rootArg(m))
			s.event(evWrite, k, m.instr, s.descs[k])
			s.inPlace(m.instr, k, e.what, s.descs[k])
		}
	case opOpen:
		return func(s *fnState, m *modelCall) {
			as := s.file(aHandle, m.arg(e.path), m.instr, e.rootArg(m))
			if as == nil {
				return
			}
			as[0].Flag = e.openFlags(s, m)
			if s.c.exclusive(as[0].Flag) {
				// a lock file: only one caller creates it; removing it
				// releases the lock (see opRemove)
				s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 1}})
				s.excl[as[0].Key] = true
			}
			s.setResult(m.instr, 0, as)
			s.truncate(m.instr, as[0].Key, e.what, as[0].Flag, s.descs[as[0].Key])
		}
	case opTemp:
		return func(s *fnState, m *modelCall) {
			k := "temp" + localMarker + m.instr.(ssa.Value).Name()
			s.setResult(m.instr, 0, atoms{{Kind: aHandle, Key: k,
				Flag: intArg{Known: true, Val: s.c.os.rdwr | s.c.os.create}}})
		}
	case opRename:
		// a write of the destination; the source, if this function wrote
		// it, was a temporary file
		return func(s *fnState, m *modelCall) {
			s.renamed[s.term(m.arg(e.from))] = true
			if from := m.arg(e.from); from != nil && e.rootArg(m) != nil {
				s.renamed[s.pathKey(from, m.instr, e.rootArg(m))] = true
			}
			for _, k := range s.viaKeys(s.atomsOf(m.arg(e.from)), evWrite) {
				s.renamed[k] = true
			}
			k := s.pathKey(m.arg(e.to), m.instr, e.rootArg(m))
			s.event(evWrite, k, m.instr, s.descs[k])
		}
	case opRemove:
		// removing a lock file (one this function created exclusively, or
		// one named *.lock) releases the lock it stands for
		return func(s *fnState, m *modelCall) {
			k := s.term(m.arg(e.path))
			if name, ok := lastConst(k); ok && strings.HasSuffix(name, ".lock") || s.excl[k] {
				s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 0}})
			}
		}
	case opContent:
		return func(s *fnState, m *modelCall) {
			as := s.atomsOf(m.arg(e.from))
			s.setResult(m.instr, 0, union(as, contentOf(as, s.c)))
		}
	case opDecode:
		return func(s *fnState, m *modelCall) {
			if dst := m.arg(e.to); dst != nil {
				s.store(dst, s.decode(m.instr, contentOf(s.atomsOf(m.arg(e.from)), s.c)))
			}
		}
	case opDecodeFile:
		return func(s *fnState, m *modelCall) {
			s.store(m.arg(e.to), s.decode(m.instr, s.file(aContent, m.arg(e.path), m.instr)))
		}
	case opParse:
		return func(s *fnState, m *modelCall) {
			s.setResult(m.instr, 0, s.decode(m.instr, contentOf(s.atomsOf(m.arg(e.from)), s.c)))
		}
	case opEncode:
		return func(s *fnState, m *modelCall) { s.setResult(m.instr, 0, s.atomsOf(m.arg(e.from))) }
	case opInstanceRead:
		return func(s *fnState, m *modelCall) { s.instanceRead(m, e) }
	case opNone:
		return func(*fnState, *modelCall) {}
	case opInstanceDoc:
		return func(s *fnState, m *modelCall) {
			k, _ := globalDoc(e.doc)
			if !e.global {
				k = s.instanceKey(m.arg(0))
			}
			s.setResult(m.instr, 0, atoms{{Kind: aDecoded, Key: k}})
		}
	case opInstanceWrite:
		return func(s *fnState, m *modelCall) { s.instanceWrite(m, e) }
	case opInstanceFrom:
		// an instance given a copy of a document (another instance's
		// AllSettings, encoded) stands for that document: its write puts
		// the copy back
		return func(s *fnState, m *modelCall) {
			var hs atoms
			for _, a := range s.atomsOf(m.arg(e.from)) {
				if a.Kind == aDecoded || a.Kind == aContent {
					hs.add(atom{Kind: aHandle, Key: a.Key, Flag: intArg{Known: true, Val: s.c.os.rdwr}})
				}
			}
			s.store(m.arg(0), hs)
		}
	case opEncoder:
		// the encoder holds its writer: making one writes nothing
		return func(s *fnState, m *modelCall) {
			if w := m.arg(e.from); w != nil {
				s.setResult(m.instr, 0, s.atomsOf(w))
				if v, ok := m.instr.(ssa.Value); ok {
					s.link(v, w)
				}
			}
		}
	case opEncodeTo:
		// what is encoded goes to the encoder's writer: a file it holds
		// is written, a buffer holds the document
		return func(s *fnState, m *modelCall) {
			enc := m.arg(e.to)
			if enc == nil {
				return
			}
			s.writeVia(m.instr, s.atomsOf(enc), s.c.argSource(m.instr, e.to, len(m.args)))
			if v := m.arg(e.from); v != nil {
				s.store(enc, s.atomsOf(v).filter(func(a atom) bool { return a.Kind == aDecoded || a.Kind == aContent }))
			}
		}
	case opFlock:
		return func(s *fnState, m *modelCall) {
			s.lock(m.instr, lockOp{How: s.intArg(m.arg(e.flagArg)), Unlock: s.c.os.lockUn})
		}
	case opFcntl:
		return func(s *fnState, m *modelCall) {
			s.lock(m.instr, lockOp{How: s.storedField(m.arg(e.flagArg), "Type"), Unlock: s.c.os.fUnlck})
		}
	case opLock:
		return func(s *fnState, m *modelCall) { s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 1}}) }
	case opUnlock:
		return func(s *fnState, m *modelCall) { s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 0}}) }
	}
	panic("statuslint: a library entry with no effect")
}

// rootArg returns the argument a rooted entry's path is relative to.
func (e libEntry) rootArg(m *modelCall) ssa.Value {
	if e.rooted {
		return m.arg(0)
	}
	return nil
}

// openFlags returns the flags a file is opened with at a call of the entry.
func (e libEntry) openFlags(s *fnState, m *modelCall) intArg {
	switch e.flags {
	case flagsCreate:
		return intArg{Known: true, Val: s.c.os.rdwr | s.c.os.create | s.c.os.trunc}
	case flagsArg:
		return s.intArg(m.arg(e.flagArg))
	}
	return intArg{Known: true, Val: s.c.os.rdonly}
}

// file returns the atom of file path, opened or read by instr; with a
// root (a sandboxed Fs), the path is relative to it.
func (s *fnState) file(kind atomKind, path ssa.Value, instr ssa.CallInstruction, root ...ssa.Value) atoms {
	if path == nil {
		return nil
	}
	k := s.term(path)
	if len(root) > 0 && root[0] != nil {
		k = s.term(root[0]) + "/" + k
	}
	if _, ok := s.descs[k]; !ok {
		s.descs[k] = s.c.source(path, instr)
	}
	if _, ok := s.readAt[k]; !ok && kind != aDecoded {
		s.readAt[k] = instr
	}
	a := atom{Kind: kind, Key: k}
	if kind == aHandle {
		a.Flag = intArg{Known: true, Val: s.c.os.rdonly}
	}
	return atoms{a}
}

func (s *fnState) writeFile(m *modelCall, path, root ssa.Value) {
	if path == nil {
		return
	}
	as := s.file(aContent, path, m.instr, root)
	s.event(evWrite, as[0].Key, m.instr, s.descs[as[0].Key])
}

// pathKey keys a path argument and remembers how it is written.
func (s *fnState) pathKey(path ssa.Value, instr ssa.CallInstruction, root ...ssa.Value) string {
	if path == nil {
		return localMarker
	}
	return s.file(aContent, path, instr, root...)[0].Key
}

// readDecoded models status.Load: the decoded document at path.
func (s *fnState) readDecoded(m *modelCall, path ssa.Value) {
	if path == nil {
		return
	}
	as := s.file(aDecoded, path, m.instr)
	s.setResult(m.instr, 0, as)
	s.event(evRead, as[0].Key, m.instr, s.descs[as[0].Key])
}

// storePath returns the path a status.Store was made for
// (status.NewStore[T](path)), or the store itself.
func (s *fnState) storePath(store ssa.Value) ssa.Value {
	if call, ok := store.(*ssa.Call); ok {
		if obj := staticObject(call.Common()); obj != nil && pkgPath(obj) == statusPkg &&
			obj.Name() == "NewStore" && len(call.Common().Args) > 0 {
			return call.Common().Args[0]
		}
	}
	return store
}

// storedField returns the integer constant stored in field name of the
// struct that ptr points to (the Type of a syscall.Flock_t), if known.
func (s *fnState) storedField(ptr ssa.Value, name string) intArg {
	alloc, ok := ptr.(*ssa.Alloc)
	if !ok || alloc.Referrers() == nil {
		return intArg{}
	}
	for _, r := range *alloc.Referrers() {
		fa, ok := r.(*ssa.FieldAddr)
		if !ok || fieldName(fa.X.Type(), fa.Field) != name || fa.Referrers() == nil {
			continue
		}
		for _, r := range *fa.Referrers() {
			if st, ok := r.(*ssa.Store); ok {
				return s.intArg(st.Val)
			}
		}
	}
	return intArg{}
}

// flagged applies the -readers and -writers flags: the document is the
// first string argument, or else the receiver.
func (s *fnState) flagged(instr ssa.CallInstruction, obj types.Object, args []ssa.Value) bool {
	name := objectName(obj)
	if extra.lockers.has(name) {
		s.lock(instr, lockOp{How: intArg{Known: true, Val: 1}})
		return true
	}
	isReader, isWriter := extra.readers.has(name), extra.writers.has(name)
	if !isReader && !isWriter {
		return false
	}
	var path ssa.Value
	for _, a := range args {
		if isString(a.Type()) {
			path = a
			break
		}
	}
	if path == nil && len(args) > 0 && isMethodObj(obj) {
		path = args[0]
	}
	if path == nil {
		return false
	}
	if isReader {
		as := s.file(aDecoded, path, instr)
		s.setResult(instr, 0, as)
		s.event(evRead, as[0].Key, instr, s.descs[as[0].Key])
	}
	if isWriter {
		k := s.pathKey(path, instr)
		s.event(evWrite, k, instr, s.descs[k])
	}
	return true
}

func isMethodObj(obj types.Object) bool {
	fn, ok := obj.(*types.Func)
	return ok && isMethod(fn)
}

// objectName names a function, method or package-level variable the way
// the -readers and -writers flags do: pkg.Func, pkg.T.Method,
// pkg.Interface.Method, pkg.Var.
func objectName(obj types.Object) string {
	prefix := pkgPath(obj) + "."
	if fn, ok := obj.(*types.Func); ok {
		if sig, _ := fn.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
			t := sig.Recv().Type()
			if p, ok := t.(*types.Pointer); ok {
				t = p.Elem()
			}
			if n, ok := types.Unalias(t).(*types.Named); ok {
				prefix += n.Obj().Name() + "."
			}
		}
	}
	return prefix + obj.Name()
}

// osConsts are the values of the open flags and lock operations as the
// analysed code sees them (they differ between systems).
type osConsts struct {
	rdonly, wronly, rdwr, create, trunc, append, excl int64
	lockUn, fUnlck                                    int64
}

func findOSConsts(imports map[string]*types.Package) osConsts {
	c := osConsts{rdonly: 0, wronly: 1, rdwr: 2, create: 0x40, trunc: 0x200, append: 0x400, excl: 0x80, lockUn: 8, fUnlck: 2}
	get := func(pkg, name string, dst *int64) {
		p := imports[pkg]
		if p == nil {
			return
		}
		if k, ok := p.Scope().Lookup(name).(*types.Const); ok {
			if v, ok := constant.Int64Val(k.Val()); ok {
				*dst = v
			}
		}
	}
	get("os", "O_RDONLY", &c.rdonly)
	get("os", "O_WRONLY", &c.wronly)
	get("os", "O_RDWR", &c.rdwr)
	get("os", "O_CREATE", &c.create)
	get("os", "O_TRUNC", &c.trunc)
	get("os", "O_APPEND", &c.append)
	get("os", "O_EXCL", &c.excl)
	get("syscall", "LOCK_UN", &c.lockUn)
	get("syscall", "F_UNLCK", &c.fUnlck)
	return c
}

// readable reports whether a handle opened with f reads a document: not
// one that truncates it, nor a log opened for appending.
func (c *checker) readable(f intArg) bool {
	if !f.Known {
		return true
	}
	return f.Val&(c.os.rdonly|c.os.wronly|c.os.rdwr) != c.os.wronly && f.Val&(c.os.trunc|c.os.append) == 0
}

// writable reports whether a handle opened with f writes a document over:
// appending to a log loses nothing another writer appended.
func (c *checker) writable(f intArg) bool {
	return !f.Known || f.Val&(c.os.wronly|c.os.rdwr) != 0 && f.Val&c.os.append == 0
}

// exclusive reports whether a file opened with f is created exclusively
// (O_CREATE|O_EXCL): the protocol of a lock file.
func (c *checker) exclusive(f intArg) bool {
	return f.Known && f.Val&c.os.create != 0 && f.Val&c.os.excl != 0
}

func (c *checker) truncates(f intArg) bool {
	return f.Known && c.writable(f) && f.Val&c.os.trunc != 0
}

// writerType reports whether a parameter of type t hands a file handle to
// code that writes it: an interface with a method through which
// *os.File writes (io.Writer, io.WriteCloser...).
func (c *checker) writerType(t types.Type) bool {
	if t == nil {
		return false
	}
	iface, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for i := range iface.NumMethods() {
		if fileMethods[iface.Method(i).Name()] == fmWrite {
			return true
		}
	}
	return false
}

func constInt(c *ssa.Const) (int64, bool) {
	if c.Value == nil || c.Value.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(c.Value)
}
