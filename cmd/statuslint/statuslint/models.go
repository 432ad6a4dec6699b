package statuslint

import (
	"go/constant"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Models say what calls do whose bodies are not analysed: the file APIs
// of the standard library (which is not analysed), the system calls that
// take file locks, the decoders of the codecs services use (their bodies
// decode by reflection, which the analysis does not follow), and this
// module's status and fs packages. A model is keyed by the function's
// identity (funcKey), never by a name alone.
var models = map[string]model{}

// A model applies what one function does at a call.
type model func(s *fnState, m *modelCall)

type modelCall struct {
	instr ssa.CallInstruction
	args  []ssa.Value // the receiver first for a method
	fn    *types.Func
}

func (m *modelCall) arg(i int) ssa.Value {
	if i < len(m.args) {
		return m.args[i]
	}
	return nil
}

func init() {
	for _, pkg := range []string{"os", "io/ioutil"} {
		models[key(pkg, "ReadFile")] = readFile(0)
	}
	models[key("io/ioutil", "WriteFile")] = writeFile("ioutil.WriteFile truncates")
	models[key("os", "WriteFile")] = writeFile("os.WriteFile truncates")
	models[key("os", "Open")] = openFile(0, func(s *fnState, _ *modelCall) intArg {
		return intArg{Known: true, Val: s.c.os.rdonly}
	}, "")
	models[key("os", "Create")] = openFile(0, func(s *fnState, _ *modelCall) intArg {
		return intArg{Known: true, Val: s.c.os.rdwr | s.c.os.create | s.c.os.trunc}
	}, "os.Create truncates")
	models[key("os", "OpenFile")] = openFile(0, func(s *fnState, m *modelCall) intArg {
		return s.intArg(m.arg(1))
	}, "os.OpenFile with O_TRUNC truncates")
	models[key("os", "CreateTemp")] = tempFile
	models[key("io/ioutil", "TempFile")] = tempFile
	models[key("os", "Rename")] = rename(0, 1)
	models[key("os", "Truncate")] = writeArg(0)
	for _, pkg := range []string{"io", "io/ioutil"} {
		models[key(pkg, "ReadAll")] = passContent(0)
	}

	// Methods of *os.File.
	for name, kind := range fileMethods {
		name, kind := name, kind
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

	// Decoders.
	for _, pkg := range []string{"encoding/json", "encoding/xml", "encoding/gob",
		"gopkg.in/yaml.v2", "gopkg.in/yaml.v3", "go.yaml.in/yaml/v2", "go.yaml.in/yaml/v3",
		"sigs.k8s.io/yaml", "github.com/ghodss/yaml", "github.com/goccy/go-yaml",
		"github.com/BurntSushi/toml", "github.com/pelletier/go-toml", "github.com/pelletier/go-toml/v2"} {
		models[key(pkg, "Unmarshal")] = decodeArg(0, 1)
		models[key(pkg, "UnmarshalStrict")] = decodeArg(0, 1)
		models[key(pkg, "NewDecoder")] = passContent(0)
		models[key(pkg, "Decoder.Decode")] = decodeArg(0, 1)
	}
	models[key("encoding/binary", "Read")] = decodeArg(0, 2)
	// Encoders read what they are given and fill nothing.
	for _, pkg := range []string{"encoding/json", "encoding/xml",
		"gopkg.in/yaml.v2", "gopkg.in/yaml.v3", "go.yaml.in/yaml/v2", "go.yaml.in/yaml/v3",
		"sigs.k8s.io/yaml", "github.com/ghodss/yaml", "github.com/goccy/go-yaml",
		"github.com/pelletier/go-toml/v2"} {
		models[key(pkg, "Marshal")] = passValue(0)
		models[key(pkg, "MarshalIndent")] = passValue(0)
	}
	models[key("github.com/BurntSushi/toml", "Decode")] = decodeArg(0, 1)
	models[key("github.com/BurntSushi/toml", "DecodeReader")] = decodeArg(0, 1)
	models[key("github.com/BurntSushi/toml", "DecodeFile")] = func(s *fnState, m *modelCall) {
		s.store(m.arg(1), s.decode(m.instr, s.file(aContent, m.arg(0), m.instr)))
	}

	// Libraries services use to touch files, whose file systems are
	// interfaces with implementations in other packages than the helpers
	// that call them (so the helpers' facts cannot see them). A file is
	// keyed by its name, whatever the file system (an OsFs, a chroot).
	const afero, billy, billyUtil = "github.com/spf13/afero", "github.com/go-git/go-billy/v5", "github.com/go-git/go-billy/v5/util"
	models[key(afero, "ReadFile")] = readFile(1)
	models[key(afero, "Afero.ReadFile")] = readFile(1)
	models[key(afero, "WriteFile")] = writeNamed(1, "afero.WriteFile truncates")
	models[key(afero, "Afero.WriteFile")] = writeNamed(1, "afero.WriteFile truncates")
	models[key(billyUtil, "ReadFile")] = readFile(1)
	models[key(billyUtil, "WriteFile")] = writeNamed(1, "util.WriteFile truncates")
	for _, iface := range []string{afero + keySep + "Fs", billy + keySep + "Basic", billy + keySep + "Filesystem"} {
		models[iface+".Open"] = openFile(1, func(s *fnState, _ *modelCall) intArg {
			return intArg{Known: true, Val: s.c.os.rdonly}
		}, "")
		models[iface+".Create"] = openFile(1, func(s *fnState, _ *modelCall) intArg {
			return intArg{Known: true, Val: s.c.os.rdwr | s.c.os.create | s.c.os.trunc}
		}, "Create truncates")
		models[iface+".OpenFile"] = openFile(1, func(s *fnState, m *modelCall) intArg {
			return s.intArg(m.arg(2))
		}, "OpenFile with O_TRUNC truncates")
		models[iface+".Rename"] = rename(1, 2)
	}

	viperModels()

	// koanf: a file provider holds the file's content; Load decodes what
	// the provider holds into the instance.
	models[key("github.com/knadh/koanf/providers/file", "Provider")] = readFile(0)
	for _, pkg := range []string{"github.com/knadh/koanf", "github.com/knadh/koanf/v2"} {
		models[key(pkg, "Koanf.Load")] = decodeArg(1, 0)
	}

	// File locks.
	for _, pkg := range []string{"syscall", "golang.org/x/sys/unix"} {
		models[key(pkg, "Flock")] = func(s *fnState, m *modelCall) {
			s.lock(m.instr, lockOp{How: s.intArg(m.arg(1)), Unlock: s.c.os.lockUn})
		}
		models[key(pkg, "FcntlFlock")] = func(s *fnState, m *modelCall) {
			s.lock(m.instr, lockOp{How: s.storedField(m.arg(2), "Type"), Unlock: s.c.os.fUnlck})
		}
	}
	models[key("golang.org/x/sys/windows", "LockFileEx")] = func(s *fnState, m *modelCall) {
		s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 1}, Unlock: 0})
	}
	models[key("golang.org/x/sys/windows", "UnlockFileEx")] = func(s *fnState, m *modelCall) {
		s.lock(m.instr, lockOp{How: intArg{Known: true, Val: 0}, Unlock: 0})
	}

	// This module: status and fs.
	models[key(statusPkg, "Load")] = func(s *fnState, m *modelCall) { s.readDecoded(m, m.arg(1)) }
	for _, name := range []string{"Store.Load", "Store.LoadExisting"} {
		models[key(statusPkg, name)] = func(s *fnState, m *modelCall) { s.readDecoded(m, s.storePath(m.arg(0))) }
	}
	for _, name := range []string{"WriteAtomic", "WriteAtomicNoFollow"} {
		models[key(fsPkg, name)] = writeArg(0)
	}
	models[key(fsPkg, "WriteAtomicFrom")] = writeArg(1)
	models[key(fsPkg, "ReadRegular")] = readFile(0)
	models[key(fsPkg, "Fs.ReadFile")] = func(s *fnState, m *modelCall) {
		s.setResult(m.instr, 0, s.file(aContent, m.arg(1), m.instr, m.arg(0)))
	}
	models[key(fsPkg, "Fs.Open")] = func(s *fnState, m *modelCall) {
		s.setResult(m.instr, 0, s.file(aHandle, m.arg(1), m.instr, m.arg(0)))
	}
	for _, name := range []string{"Fs.WriteAtomic", "Fs.Append"} {
		models[key(fsPkg, name)] = func(s *fnState, m *modelCall) { s.writeFile(m, m.arg(1), m.arg(0)) }
	}
	models[key(fsPkg, "Fs.WriteAtomicFrom")] = func(s *fnState, m *modelCall) { s.writeFile(m, m.arg(2), m.arg(0)) }
	models[key(fsPkg, "Fs.Rename")] = func(s *fnState, m *modelCall) { s.writeFile(m, m.arg(2), m.arg(0)) }
}

func key(pkg, name string) string { return pkg + keySep + name }

// The methods of *os.File that matter, and through which an interface
// value holding a handle reaches the file.
type fileMethod uint8

const (
	fmWrite fileMethod = iota + 1 // writes the file
	fmRead                        // reads the file into its first argument
	fmSame                        // returns (a name or descriptor of) the file
)

var fileMethods = map[string]fileMethod{
	"Write": fmWrite, "WriteString": fmWrite, "WriteAt": fmWrite, "ReadFrom": fmWrite, "Truncate": fmWrite,
	"Read": fmRead, "ReadAt": fmRead,
	"Name": fmSame, "Fd": fmSame,
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

func readFile(path int) model {
	return func(s *fnState, m *modelCall) {
		s.setResult(m.instr, 0, s.file(aContent, m.arg(path), m.instr))
	}
}

func writeFile(what string) model {
	return func(s *fnState, m *modelCall) {
		k := s.pathKey(m.arg(0), m.instr)
		s.event(evWrite, k, m.instr, s.descs[k])
		s.inPlace(m.instr, k, what, s.descs[k])
	}
}

func writeArg(path int) model {
	return func(s *fnState, m *modelCall) { s.writeFile(m, m.arg(path), nil) }
}

func (s *fnState) writeFile(m *modelCall, path, root ssa.Value) {
	if path == nil {
		return
	}
	as := s.file(aContent, path, m.instr, root)
	s.event(evWrite, as[0].Key, m.instr, s.descs[as[0].Key])
}

// pathKey keys a path argument and remembers how it is written.
func (s *fnState) pathKey(path ssa.Value, instr ssa.CallInstruction) string {
	if path == nil {
		return localMarker
	}
	return s.file(aContent, path, instr)[0].Key
}

// openFile models os.OpenFile and its kin: a handle with the flags given,
// which truncates the file if they say so.
func openFile(path int, flags func(*fnState, *modelCall) intArg, what string) model {
	return func(s *fnState, m *modelCall) {
		as := s.file(aHandle, m.arg(path), m.instr)
		if as == nil {
			return
		}
		as[0].Flag = flags(s, m)
		s.setResult(m.instr, 0, as)
		s.truncate(m.instr, as[0].Key, what, as[0].Flag, s.descs[as[0].Key])
	}
}

func tempFile(s *fnState, m *modelCall) {
	k := "temp" + localMarker + m.instr.(ssa.Value).Name()
	s.setResult(m.instr, 0, atoms{{Kind: aHandle, Key: k,
		Flag: intArg{Known: true, Val: s.c.os.rdwr | s.c.os.create}}})
}

// rename models os.Rename: a write of the destination; the source, if this
// function wrote it, was a temp file.
func rename(from, to int) model {
	return func(s *fnState, m *modelCall) {
		src := s.term(m.arg(from))
		s.renamed[src] = true
		for _, k := range s.viaKeys(s.atomsOf(m.arg(from)), evWrite) {
			s.renamed[k] = true
		}
		k := s.pathKey(m.arg(to), m.instr)
		s.event(evWrite, k, m.instr, s.descs[k])
	}
}

// passContent models a call whose result reads what its argument holds
// (io.ReadAll, json.NewDecoder): the content of handles among it.
func passContent(from int) model {
	return func(s *fnState, m *modelCall) {
		as := s.atomsOf(m.arg(from))
		s.setResult(m.instr, 0, union(as, contentOf(as, s.c)))
	}
}

// writeNamed models a whole-file write of the file named by argument
// path, truncating when what is set.
func writeNamed(path int, what string) model {
	return func(s *fnState, m *modelCall) {
		k := s.pathKey(m.arg(path), m.instr)
		s.event(evWrite, k, m.instr, s.descs[k])
		s.inPlace(m.instr, k, what, s.descs[k])
	}
}

// passValue models a call whose result is computed from argument from.
func passValue(from int) model {
	return func(s *fnState, m *modelCall) { s.setResult(m.instr, 0, s.atomsOf(m.arg(from))) }
}

// decodeArg models a decoder: what argument from holds, decoded into
// argument to.
func decodeArg(from, to int) model {
	return func(s *fnState, m *modelCall) {
		dst := m.arg(to)
		if dst == nil {
			return
		}
		s.store(dst, s.decode(m.instr, contentOf(s.atomsOf(m.arg(from)), s.c)))
	}
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
	rdonly, wronly, rdwr, create, trunc, append int64
	lockUn, fUnlck                              int64
}

func findOSConsts(imports map[string]*types.Package) osConsts {
	c := osConsts{rdonly: 0, wronly: 1, rdwr: 2, create: 0x40, trunc: 0x200, append: 0x400, lockUn: 8, fUnlck: 2}
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
