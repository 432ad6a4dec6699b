package statuslint

import (
	"go/types"
	"strings"
)

// checkInPlace reports rule 2: truncating whole-file writes of JSON files.
func (u *unit) checkInPlace() {
	for _, call := range u.calls {
		fn := u.callee(call)
		if fn == nil || len(call.Args) == 0 {
			continue
		}
		name, pkg := fn.Name(), pkgPath(fn)
		p := call.Args[0]
		var what string
		switch {
		case (pkg == "os" || pkg == "io/ioutil") && name == "WriteFile" && !isMethod(fn):
			what = pkg[strings.LastIndex(pkg, "/")+1:] + ".WriteFile truncates"
		case pkg == "os" && name == "Create" && !isMethod(fn):
			what = "os.Create truncates"
		case pkg == "os" && name == "OpenFile" && !isMethod(fn) && len(call.Args) >= 2:
			flag, ok := u.intConst(call.Args[1])
			if !ok || flag&osConst(fn, "O_TRUNC") == 0 {
				continue
			}
			what = "os.OpenFile with O_TRUNC truncates"
		case name == "Write" && isMethod(fn) && pkg != fsPkg && u.firstString(call) == p:
			what = "Write(path, …) writes"
		default:
			continue
		}
		if u.jsonPath(p, 0) {
			u.fn.report(call.Pos(), "not atomic: %s %s in place, so a concurrent reader can see an empty "+
				"or partial file (use fs.WriteAtomic)", what, types.ExprString(p))
		}
	}
}
