package statuslint

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// staticObject returns the function a call calls, if it is known.
func staticObject(cc *ssa.CallCommon) *types.Func {
	if cc.IsInvoke() {
		return nil
	}
	if fn := cc.StaticCallee(); fn != nil {
		obj, _ := fn.Object().(*types.Func)
		return obj
	}
	return nil
}

func pkgPath(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	return obj.Pkg().Path()
}

func isMethod(fn *types.Func) bool {
	sig, _ := fn.Type().(*types.Signature)
	return sig != nil && sig.Recv() != nil
}

// funcKey names a function or method: its package path, then the name of
// its receiver's type, then its name, separated by keySep.
func funcKey(fn *types.Func) string {
	prefix := pkgPath(fn) + keySep
	if sig, _ := fn.Type().(*types.Signature); sig != nil && sig.Recv() != nil {
		t := sig.Recv().Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		switch n := types.Unalias(t).(type) {
		case *types.Named:
			prefix += n.Obj().Name() + "."
		case *types.Interface:
			prefix += "interface."
		}
	}
	return prefix + fn.Name()
}

// keySep separates a function's package path from its name in its key; it
// shows as a dot.
const keySep = "\x01"

func splitFuncKey(key string) (path, name, typ string) {
	path, rest, _ := strings.Cut(key, keySep)
	if t, n, ok := strings.Cut(rest, "."); ok {
		return path, n, t
	}
	return path, rest, ""
}

// funcKeyOf names a function value: a function or method by funcKey, a
// function literal or wrapper by a name local to this pass.
func (c *checker) funcKeyOf(fn *ssa.Function) string {
	if obj, ok := fn.Object().(*types.Func); ok && fn.Parent() == nil && !isWrapper(fn) {
		return funcKey(obj.Origin())
	}
	key := localMarker + "fn:" + fn.String()
	c.keyed[key] = fn
	return key
}
