package statuslint

import (
	"encoding/binary"
	"errors"
)

// Facts are written by hand rather than by gob's reflection: go vet
// re-exports the method facts of every dependency in each package's facts
// file, so that a package that imports a large API (a Kubernetes client)
// decodes hundreds of thousands of them, and gob's decoding of nested
// slices of structs was most of such a package's cost.

var errFactData = errors.New("statuslint: corrupt fact data")

type factWriter struct{ b []byte }

func (w *factWriter) uint(n int)   { w.b = binary.AppendUvarint(w.b, uint64(n)) }
func (w *factWriter) int(n int64)  { w.b = binary.AppendVarint(w.b, n) }
func (w *factWriter) str(s string) { w.uint(len(s)); w.b = append(w.b, s...) }

func (w *factWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *factWriter) strs(s []string) {
	w.uint(len(s))
	for _, x := range s {
		w.str(x)
	}
}

func (w *factWriter) ints(s []int) {
	w.uint(len(s))
	for _, x := range s {
		w.uint(x)
	}
}

func (w *factWriter) intArg(a intArg) {
	w.bool(a.Known)
	w.int(a.Val)
	w.bool(a.FromParam)
	w.uint(a.Param)
}

func (w *factWriter) atoms(as atoms) {
	w.uint(len(as))
	for _, a := range as {
		w.b = append(w.b, byte(a.Kind))
		w.str(a.Key)
		w.uint(a.Param)
		w.intArg(a.Flag)
		w.bool(a.NoHandle)
	}
}

func (w *factWriter) truncs(ts []trunc) {
	w.uint(len(ts))
	for _, t := range ts {
		w.str(t.Key)
		w.str(t.What)
		w.intArg(t.Flag)
	}
}

func (w *factWriter) fn(f *fnFact) {
	w.bool(f != nil)
	if f == nil {
		return
	}
	w.bool(f.Recv)
	w.strs(f.Paths)
	w.uint(len(f.Results))
	for _, r := range f.Results {
		w.atoms(r)
	}
	w.uint(len(f.Stores))
	for _, s := range f.Stores {
		w.uint(s.Param)
		w.atoms(s.Atoms)
	}
	w.strs(f.Reads)
	w.strs(f.Writes)
	w.strs(f.MayWrites)
	w.truncs(f.Truncs)
	w.truncs(f.InPlace)
	w.uint(len(f.Locks))
	for _, l := range f.Locks {
		w.intArg(l.How)
		w.int(l.Unlock)
	}
	w.ints(f.Fills)
	w.ints(f.Moves)
	w.strs(f.Cycles)
	w.strs(f.Rereads)
}

// A factReader reads what a factWriter wrote; the first error sticks.
type factReader struct {
	b   []byte
	err error
}

func (r *factReader) uint() int {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b))+1<<20 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *factReader) int() int64 {
	n, k := binary.Varint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return n
}

func (r *factReader) fail() {
	if r.err == nil {
		r.err = errFactData
	}
	r.b = nil
}

func (r *factReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *factReader) bool() bool { return r.byte() != 0 }

func (r *factReader) str() string {
	n := r.uint()
	if n > len(r.b) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// count reads a list's length, bounded by what is left to read (each
// element takes a byte at least).
func (r *factReader) count() int {
	n := r.uint()
	if n > len(r.b) {
		r.fail()
		return 0
	}
	return n
}

func (r *factReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *factReader) ints() []int {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]int, n)
	for i := range out {
		out[i] = r.uint()
	}
	return out
}

func (r *factReader) intArg() intArg {
	return intArg{Known: r.bool(), Val: r.int(), FromParam: r.bool(), Param: r.uint()}
}

func (r *factReader) atoms() atoms {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make(atoms, n)
	for i := range out {
		out[i] = atom{Kind: atomKind(r.byte()), Key: r.str(), Param: r.uint(), Flag: r.intArg(), NoHandle: r.bool()}
	}
	return out
}

func (r *factReader) truncs() []trunc {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]trunc, n)
	for i := range out {
		out[i] = trunc{Key: r.str(), What: r.str(), Flag: r.intArg()}
	}
	return out
}

func (r *factReader) fn() *fnFact {
	if !r.bool() {
		return nil
	}
	f := &fnFact{Recv: r.bool(), Paths: r.strs()}
	if n := r.count(); n > 0 {
		f.Results = make([]atoms, n)
		for i := range f.Results {
			f.Results[i] = r.atoms()
		}
	}
	if n := r.count(); n > 0 {
		f.Stores = make([]paramSet, n)
		for i := range f.Stores {
			f.Stores[i] = paramSet{Param: r.uint(), Atoms: r.atoms()}
		}
	}
	f.Reads, f.Writes, f.MayWrites = r.strs(), r.strs(), r.strs()
	f.Truncs, f.InPlace = r.truncs(), r.truncs()
	if n := r.count(); n > 0 {
		f.Locks = make([]lockOp, n)
		for i := range f.Locks {
			f.Locks[i] = lockOp{How: r.intArg(), Unlock: r.int()}
		}
	}
	f.Fills, f.Moves, f.Cycles = r.ints(), r.ints(), r.strs()
	f.Rereads = r.strs()
	return f
}

func (f *fnFact) GobEncode() ([]byte, error) {
	var w factWriter
	w.fn(f)
	return w.b, nil
}

func (f *fnFact) GobDecode(b []byte) error {
	r := factReader{b: b}
	g := r.fn()
	if r.err != nil || g == nil || len(r.b) > 0 {
		return errFactData
	}
	*f = *g
	return nil
}

func (f *varFact) GobEncode() ([]byte, error) {
	var w factWriter
	w.atoms(f.Atoms)
	w.fn(f.Call)
	w.str(f.Key)
	return w.b, nil
}

func (f *varFact) GobDecode(b []byte) error {
	r := factReader{b: b}
	*f = varFact{Atoms: r.atoms(), Call: r.fn(), Key: r.str()}
	if r.err != nil || len(r.b) > 0 {
		return errFactData
	}
	return nil
}
