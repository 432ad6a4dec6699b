package statuslint

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// go vet re-exports the facts of every method of every dependency in each
// package's facts file, so that a package importing a Kubernetes client
// decoded a hundred thousand method facts (the getters, setters, DeepCopy
// and builders of generated API types), each one gob value with its own
// package path and object path: most of such a package's cost. The facts
// of a named type's methods are therefore one fact of the type, a
// typeFact, written by hand (codec.go) and read only when one of its
// methods is called.

// A typeFact holds the facts of a named type's methods that have one.
type typeFact struct {
	Names []string  // the methods, sorted
	Facts []*fnFact // Facts[i] is method Names[i]'s; nil until read

	raw []byte // the facts as read, until load reads them
}

func (*typeFact) AFact() {}

func (f *typeFact) String() string {
	if err := f.load(); err != nil {
		return err.Error()
	}
	parts := make([]string, len(f.Names))
	for i, n := range f.Names {
		parts[i] = n + ": " + f.Facts[i].String()
	}
	return "methods " + strings.Join(parts, "; ")
}

// method returns the fact of the method named name, or nil.
func (f *typeFact) method(name string) *fnFact {
	i, ok := slices.BinarySearch(f.Names, name)
	if !ok || f.load() != nil {
		return nil
	}
	return f.Facts[i]
}

// load reads the facts of the methods, once.
func (f *typeFact) load() error {
	if f.raw == nil {
		return nil
	}
	r := factReader{b: f.raw}
	facts := make([]*fnFact, len(f.Names))
	for i := range facts {
		facts[i] = r.fn()
	}
	if r.err != nil || len(r.b) > 0 || slices.Contains(facts, nil) {
		return errFactData
	}
	f.Facts, f.raw = facts, nil
	return nil
}

func (f *typeFact) GobEncode() ([]byte, error) {
	var w factWriter
	w.strs(f.Names)
	if f.raw != nil {
		return append(w.b, f.raw...), nil
	}
	for _, g := range f.Facts {
		w.fn(g)
	}
	return w.b, nil
}

// GobDecode reads the methods' names and keeps their facts' bytes.
func (f *typeFact) GobDecode(b []byte) error {
	r := factReader{b: b}
	names := r.strs()
	if r.err != nil {
		return r.err
	}
	*f = typeFact{Names: names, raw: append([]byte(nil), r.b...)}
	if f.raw == nil {
		f.raw = []byte{}
	}
	return nil
}

// exportMethods records the facts of the package's methods, one typeFact
// for each named type, and returns the methods it recorded.
func (c *checker) exportMethods() map[*ssa.Function]bool {
	byType := make(map[*types.TypeName]*typeFact)
	done := make(map[*ssa.Function]bool)
	for _, fn := range c.funcs {
		tn := recvTypeName(fn)
		f := c.local[fn]
		if tn == nil || f == nil || f.empty() {
			continue
		}
		done[fn] = true
		tf := byType[tn]
		if tf == nil {
			tf = new(typeFact)
			byType[tn] = tf
		}
		tf.Names = append(tf.Names, fn.Name())
		tf.Facts = append(tf.Facts, f)
	}
	for tn, tf := range byType {
		idx := make([]int, len(tf.Names))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return strings.Compare(tf.Names[a], tf.Names[b]) })
		sorted := &typeFact{}
		for _, i := range idx {
			sorted.Names = append(sorted.Names, tf.Names[i])
			sorted.Facts = append(sorted.Facts, tf.Facts[i])
		}
		c.pass.ExportObjectFact(tn, sorted)
	}
	return done
}

// recvTypeName returns the type name of an exported-fact method's
// receiver, or nil for a function, a function literal or a wrapper.
func recvTypeName(fn *ssa.Function) *types.TypeName {
	obj, ok := fn.Object().(*types.Func)
	if !ok || fn.Parent() != nil || isWrapper(fn) || fn.Synthetic != "" {
		return nil
	}
	return funcRecvTypeName(obj)
}

func funcRecvTypeName(obj *types.Func) *types.TypeName {
	sig, _ := obj.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Origin().Obj()
	}
	return nil
}

// importedMethodFact returns the fact of a method of another package, from
// its type's typeFact.
func (c *checker) importedMethodFact(obj *types.Func) *fnFact {
	tn := funcRecvTypeName(obj)
	if tn == nil {
		return nil
	}
	tf, ok := c.types[tn]
	if !ok {
		tf = new(typeFact)
		if !c.pass.ImportObjectFact(tn, tf) {
			tf = nil
		}
		c.types[tn] = tf
	}
	if tf == nil {
		return nil
	}
	return tf.method(obj.Name())
}

// typeMethods returns the methods that a typeFact of type tn has facts
// for.
func typeMethods(tn *types.TypeName, f *typeFact) []*types.Func {
	var out []*types.Func
	for _, name := range f.Names {
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, tn.Pkg(), name)
		if fn, ok := obj.(*types.Func); ok && funcRecvTypeName(fn) == tn {
			out = append(out, fn)
		}
	}
	return out
}
