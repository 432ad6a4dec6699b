package statuslint

import (
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A finding is a bare read-modify-write: the write w puts back the file
// that the read r read.
type finding struct{ r, w event }

// reportRMW reports the function's read-modify-writes: one finding for
// each write call, naming every file it writes back, the read and the
// write, and the call that makes the cycle safe for the documents'
// format. A function that changes two documents or more is told to change
// them in one transaction.
func (s *fnState) reportRMW(found []finding) {
	var files []string
	for _, f := range found {
		if name := s.fileName(f.w.key, f.w.desc, f.r.desc); !slices.Contains(files, name) {
			files = append(files, name)
		}
	}
	several := len(files) > 1
	done := make(map[ssa.CallInstruction]bool)
	for i, f := range found {
		if done[f.w.instr] {
			continue
		}
		done[f.w.instr] = true
		group := []finding{f}
		for _, g := range found[i+1:] {
			if g.w.instr == f.w.instr {
				group = append(group, g)
			}
		}
		var names []string
		format := docFormat("")
		for _, g := range group {
			names = append(names, s.fileName(g.w.key, g.w.desc, g.r.desc))
			format = format.join(s.format(g))
		}
		readPos := s.readPos(f.r)
		s.c.reportf(s.c.eventPos(f.w), "read-modify-write of %s without a lock: read at line %d%s, "+
			"written back here%s; an update made in between by another goroutine or process "+
			"is lost (use %s)", strings.Join(names, " and "), s.c.pass.Fset.Position(readPos).Line,
			s.c.callNameAt(readPos, f.r.instr), s.c.callNameAt(s.c.eventPos(f.w), f.w.instr), format.fix(several))
	}
}

// readPos returns where a read is reported: where the file's content was
// first read, if that came before its decode.
func (s *fnState) readPos(r event) token.Pos {
	pos := s.c.eventPos(r)
	if at := s.readAt[r.key]; at != nil && r.pos == token.NoPos && s.c.callStart(at) < pos {
		pos = s.c.callStart(at)
	}
	return pos
}

// callNameAt names, for a message, the function called at pos (by instr,
// or by the call that starts there): " (os.ReadFile)".
func (c *checker) callNameAt(pos token.Pos, instr ssa.CallInstruction) string {
	call := c.calls[instr.Common().Pos()]
	if call == nil || call.Pos() != pos {
		call = c.callStarting(pos)
	}
	if call == nil {
		return ""
	}
	name := types.ExprString(call.Fun)
	if len(name) > 60 {
		return ""
	}
	return " (" + name + ")"
}

// callStarting returns the call expression that starts at pos, if any.
func (c *checker) callStarting(pos token.Pos) *ast.CallExpr {
	tf := c.pass.Fset.File(pos)
	f := c.files[tf]
	if f == nil {
		return nil
	}
	var found *ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		if found != nil || n == nil || n.Pos() > pos || n.End() <= pos {
			return found == nil
		}
		if call, ok := n.(*ast.CallExpr); ok && call.Pos() == pos {
			found = call
		}
		return true
	})
	return found
}

// fileName names the file a key stands for in a message: the path as the
// program spells it when it says which file (a constant file name in it),
// a library's own document by what it is, and otherwise the expression
// the path was given as at the write or the read.
func (s *fnState) fileName(k string, descs ...string) string {
	switch {
	case k == viperGlobal:
		return "viper's configuration file"
	case strings.HasSuffix(k, ".configFile"):
		if v := s.render(strings.TrimSuffix(k, ".configFile")); token.IsIdentifier(strings.ReplaceAll(v, ".", "_")) {
			return "the configuration file viper read into " + v
		}
		return "the configuration file viper read"
	case k == kubeconfigKey:
		return "the kubeconfig"
	}
	desc := ""
	for _, d := range descs {
		if d != "" {
			desc = d
			break
		}
	}
	name, ok := lastConst(k)
	if !ok || !strings.Contains(path.Base(name), ".") || strings.Contains(k, localMarker) {
		return firstNonEmpty(desc, s.render(k))
	}
	if r := s.render(k); plainPath(r) {
		return r // filepath.Join(ws, "status.json")
	}
	switch base := path.Base(name); {
	case desc == "":
		return base
	case hasToken(s.render(k), desc):
		return base + " in " + desc // the path is made of desc
	default:
		return desc + " (" + base + ")" // desc is the path
	}
}

// hasToken reports whether name occurs in r as a whole word.
func hasToken(r, name string) bool {
	for i := 0; ; {
		j := strings.Index(r[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isWordByte(r[j-1])) && (end == len(r) || !isWordByte(r[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// plainPath reports whether a rendered path is short and made only of
// names, constants, joins and concatenations, so that it reads as a path.
func plainPath(r string) bool {
	if len(r) > 80 {
		return false
	}
	rest := r
	for _, call := range []string{"filepath.Join(", "path.Join(", "os.Getenv(", "os.UserHomeDir("} {
		rest = strings.ReplaceAll(rest, call, "(")
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] == '(' && isPathByte(rest[i-1]) || rest[i-1] == ')' && rest[i] == '.' {
			return false // another call, or a field of a call's result
		}
	}
	return !strings.Contains(rest, "[*]")
}

// render writes a key for people: parameters by their names, functions by
// package and name, no internal markers.
func (s *fnState) render(k string) string {
	parts := strings.Split(k, paramDelim)
	for i := 1; i < len(parts); i += 2 {
		parts[i] = s.paramName(parts[i])
	}
	k = strings.Join(parts, "")
	// a call's result index (f(x)#1) is internal
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if k[i] == '#' && i+1 < len(k) && '0' <= k[i+1] && k[i+1] <= '9' {
			for i+1 < len(k) && '0' <= k[i+1] && k[i+1] <= '9' {
				i++
			}
			continue
		}
		b.WriteByte(k[i])
	}
	r := pretty(b.String())
	if strings.HasPrefix(r, "(") && strings.HasSuffix(r, ")") && balanced(r[1:len(r)-1]) {
		r = r[1 : len(r)-1] // a concatenation's own parentheses
	}
	return r
}

// balanced reports whether the parentheses of s pair up.
func balanced(s string) bool {
	depth := 0
	for i := range len(s) {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// paramName returns the name of parameter (or free variable) i of the
// function, given as the text of a parameter marker.
func (s *fnState) paramName(text string) string {
	i := 0
	for _, c := range text {
		if c < '0' || c > '9' {
			return "$" + text
		}
		i = i*10 + int(c-'0')
	}
	switch {
	case i < len(s.fn.Params):
		return s.fn.Params[i].Name()
	case i-len(s.fn.Params) < len(s.fn.FreeVars):
		return s.fn.FreeVars[i-len(s.fn.Params)].Name()
	}
	return "$" + text
}

// A docFormat is what a finding's document is kept as, for the fix its
// message names.
type docFormat string

const (
	formatJSON       docFormat = "JSON"
	formatYAML       docFormat = "YAML"
	formatTOML       docFormat = "TOML"
	formatViper      docFormat = "viper"
	formatKubeconfig docFormat = "kubeconfig"
	formatMixed      docFormat = "mixed"
)

// join is the format of two documents changed by one write.
func (f docFormat) join(g docFormat) docFormat {
	switch {
	case f == "" || f == g:
		return g
	case g == "":
		return f
	}
	return formatMixed
}

// fix names the call that makes a read-modify-write of a document of
// format f safe; several: the function changes more than one document.
func (f docFormat) fix(several bool) string {
	switch {
	case f == formatJSON && several:
		return "status.MutateAll: this function changes several documents"
	case f == formatJSON:
		return "status.Mutate"
	case f == formatViper && several:
		return "status.TransformAll on the files viper's ConfigFileUsed names, with viper's codec: this function changes several documents"
	case f == formatViper:
		return "status.Transform on the file viper's ConfigFileUsed names, with viper's codec"
	case f == formatKubeconfig:
		return "client-go's lock, <file>.lock created exclusively, around clientcmd.LoadFromFile, the change and the write; " +
			"status.Transform's lock file would block kubectl"
	case f == formatYAML || f == formatTOML:
		if several {
			return "status.TransformAll with your " + string(f) + " codec: this function changes several documents"
		}
		return "status.Transform with your " + string(f) + " codec"
	case several:
		return "status.MutateAll for JSON documents, status.TransformAll for others: this function changes several documents"
	}
	return "status.Mutate for a JSON document, status.Transform for another format"
}

// format tells what a finding's document is kept as: by the file name's
// extension, by the library that reads it, or by the decoder at its read.
func (s *fnState) format(f finding) docFormat {
	switch k := f.w.key; {
	case k == viperGlobal || strings.HasSuffix(k, ".configFile"):
		return formatViper
	case k == kubeconfigKey:
		return formatKubeconfig
	}
	if name, ok := lastConst(f.w.key); ok {
		switch strings.ToLower(path.Ext(name)) {
		case ".json":
			return formatJSON
		case ".yaml", ".yml":
			return formatYAML
		case ".toml":
			return formatTOML
		}
	}
	if f.r.instr == nil {
		return ""
	}
	if obj := staticObject(f.r.instr.Common()); obj != nil {
		switch p := pkgPath(obj); {
		case p == "encoding/json":
			return formatJSON
		case strings.Contains(p, "yaml"):
			return formatYAML
		case strings.Contains(p, "toml"):
			return formatTOML
		case strings.HasPrefix(p, "k8s.io/client-go/tools/clientcmd"):
			return formatKubeconfig
		}
	}
	return ""
}
