package statuslint

import (
	"go/token"
	"strconv"
	"strings"
)

// Keys name files. A key is the rendering of a path value (see term.go):
// two values with the same key denote the same file. Inside a key:
//
//   - paramMarker(i) stands for the value of parameter i of the function
//     (the receiver is parameter 0 of a method; a closure's free variables
//     follow its parameters), so that a key in a fact is a template that a
//     call fills in with its arguments;
//   - viaMarker(i), which is always a whole key, stands for the files whose
//     handles or content parameter i holds;
//   - localMarker makes a key that only the function it was made in can
//     use (a register, a value assigned on several paths): such keys match
//     within that function and never enter a fact.
const (
	paramDelim  = "\x00"
	localMarker = "\x02"
	viaDelim    = "\x03"
)

// Bounds that keep facts finite and the analysis of any function short.
const (
	maxKeyLen   = 400 // a longer key becomes local
	maxTermDeep = 24  // terms nest at most this deep
	maxAtoms    = 24  // atoms in one set
	maxList     = 32  // entries in each list of a fact
)

func paramMarker(i int) string { return paramDelim + strconv.Itoa(i) + paramDelim }

func viaMarker(i int) string { return viaDelim + strconv.Itoa(i) + viaDelim }

// viaIndex reports which parameter a via key stands for.
func viaIndex(k string) (int, bool) {
	s, ok := strings.CutPrefix(k, viaDelim)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, viaDelim)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

// ownField reports whether a key is a field of parameter 0 ($recv.Path).
func ownField(k string) bool {
	f, ok := strings.CutPrefix(k, paramMarker(0)+".")
	return ok && token.IsIdentifier(f)
}

// isTemplate reports whether a key can enter a fact: it names nothing
// local to a function.
func isTemplate(k string) bool { return k != "" && !strings.Contains(k, localMarker) }

// substitute fills the parameter markers of template t with the keys that
// arg gives. It fails if an argument has no key.
func substitute(t string, arg func(i int) (string, bool)) (string, bool) {
	if !strings.Contains(t, paramDelim) {
		return t, true
	}
	var b strings.Builder
	parts := strings.Split(t, paramDelim)
	// parts alternate: text, index, text, index, ..., text
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return "", false
		}
		k, ok := arg(n)
		if !ok {
			return "", false
		}
		b.WriteString(k)
	}
	if b.Len() > maxKeyLen {
		return "", false
	}
	return collapseRepeats(b.String()), true
}

// collapseRepeats widens a field repeated in a row (x.Inner.Inner) to one
// (x.Inner): a type that wraps a value of an interface it implements (a
// mock forwarding to the real configuration, a file system layered on
// another) calls itself through that interface, and each round of the
// analysis would otherwise name the file one field deeper, never settling.
// The widened key names the file at any depth of the chain.
func collapseRepeats(k string) string {
	if !strings.Contains(k, ".") {
		return k
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(k); i++ {
			if k[i] != '.' {
				continue
			}
			j := i + 1
			for j < len(k) && identByte(k[j]) {
				j++
			}
			seg := k[i:j] // ".X"
			if len(seg) < 2 || !strings.HasPrefix(k[j:], seg) {
				continue
			}
			if e := j + len(seg); e == len(k) || !identByte(k[e]) {
				k = k[:j] + k[e:]
				changed = true
				break
			}
		}
	}
	return k
}

func identByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// firstParam returns the first parameter named in template t, preferring
// one that is not the receiver.
func firstParam(t string, recv bool) (int, bool) {
	parts := strings.Split(t, paramDelim)
	found, idx := false, 0
	for i := 1; i < len(parts); i += 2 {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			continue
		}
		if !found || (recv && idx == 0 && n != 0) {
			found, idx = true, n
		}
	}
	return idx, found
}

// show renders a key for people: $0, $1... for parameters ($recv for a
// method's receiver), local names without their marker.
func show(k string, recv bool) string {
	if i, ok := viaIndex(k); ok {
		return "file of " + paramName(i, recv)
	}
	parts := strings.Split(k, paramDelim)
	for i := 1; i < len(parts); i += 2 {
		n, _ := strconv.Atoi(parts[i])
		parts[i] = paramName(n, recv)
	}
	s := strings.Join(parts, "")
	return strings.NewReplacer(localMarker, "", keySep, ".").Replace(s)
}

func paramName(i int, recv bool) string {
	switch {
	case recv && i == 0:
		return "$recv"
	case recv:
		return "$" + strconv.Itoa(i-1)
	}
	return "$" + strconv.Itoa(i)
}

// pretty renders a key for a message, in Go's syntax where it can:
// filepath.Join(config.ConfigDir(), "config.yml") for a key that names
// functions by import path and a variadic call's arguments in braces.
func pretty(k string) string {
	s := show(k, false)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			// copy a string literal as it is
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				j = len(s) - 1
			}
			b.WriteString(s[i : j+1])
			i = j
		case c == '{' || c == '}':
			// the slice of a variadic call: its elements are the arguments
		default:
			b.WriteByte(c)
		}
	}
	return shortPaths(b.String())
}

// shortPaths writes import paths as the last element of the path:
// github.com/cli/go-gh/v2/pkg/config.ConfigDir as config.ConfigDir.
func shortPaths(s string) string {
	var b strings.Builder
	word := 0 // start of the current run of path characters
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] == '"' && word == i {
			// a string literal is copied as it is
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(s)-1)
			b.WriteString(s[i : j+1])
			i, word = j, j+1
			continue
		}
		if i < len(s) && isPathByte(s[i]) {
			continue
		}
		w := s[word:i]
		if j := strings.LastIndexByte(w, '/'); j >= 0 && strings.Contains(w[j:], ".") {
			w = w[j+1:]
		}
		b.WriteString(w)
		if i < len(s) {
			b.WriteByte(s[i])
		}
		word = i + 1
	}
	return b.String()
}

func isPathByte(c byte) bool {
	return c == '/' || c == '.' || c == '-' || c == '_' || c == '~' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// lastConst returns the last string constant in a key: the file name of a
// path such as Join(dir, "status.json") or dir + "/status.json".
func lastConst(k string) (string, bool) {
	end := strings.LastIndexByte(k, '"')
	for end > 0 {
		// find the opening quote of the literal that ends at end
		for start := end - 1; start >= 0; start-- {
			if k[start] != '"' {
				continue
			}
			if s, err := strconv.Unquote(k[start : end+1]); err == nil {
				return s, true
			}
		}
		end = strings.LastIndexByte(k[:end], '"')
	}
	return "", false
}

// isJSONKey reports whether a key's file name is a constant ending in
// ".json".
func isJSONKey(k string) bool {
	s, ok := lastConst(k)
	return ok && strings.HasSuffix(strings.ToLower(s), ".json")
}
