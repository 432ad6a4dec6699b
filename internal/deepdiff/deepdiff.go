// Package deepdiff reports how two values differ, for test failure
// messages, with only the standard library.
//
// The tests inside the library packages (fs, status, config, logger, core)
// may import only the standard library and packages like this one: a
// consumer's go mod tidy records every module those tests import. Tests
// elsewhere use go-cmp.
//
// Equality is [reflect.DeepEqual]: unlike go-cmp, Equal methods are not
// called (two time.Time values for the same instant in different locations
// differ) and a nil slice or map differs from an empty one. The report
// renders both values one element or field per line and prints the lines
// that differ, prefixed "-" (want) and "+" (got), with a little context.
package deepdiff

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Diff returns "" if want and got are deeply equal, and otherwise a
// line-by-line comparison of the two (-want +got).
func Diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	w, g := render(want), render(got)
	if slices.Equal(w, g) {
		// NaN, a func, or a pointer cycle: unequal values that read alike.
		return fmt.Sprintf("values differ but render alike:\n-%s\n+%s", strings.Join(w, "\n-"), strings.Join(g, "\n+"))
	}
	return lines(w, g)
}

// render formats v one element, entry or field per line.
func render(v any) []string {
	var r renderer
	r.dynamic(reflect.ValueOf(v), "", "", "")
	return r.out
}

// dynamic renders the value held by an interface: a number or bool with
// its type, since 1, int64(1) and float64(1) all read "1".
func (r *renderer) dynamic(v reflect.Value, indent, prefix, suffix string) {
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		if _, ok := stringer(v); !ok {
			r.out = append(r.out, fmt.Sprintf("%s%s%s(%#v)%s", indent, prefix, v.Type(), v, suffix))
			return
		}
	}
	r.value(v, indent, prefix, suffix)
}

type renderer struct {
	out   []string
	depth int // pointer nesting, to stop at cycles
}

// value appends v's lines: the first prefixed by prefix, every line
// indented by indent, the last followed by suffix (a comma inside a
// composite).
func (r *renderer) value(v reflect.Value, indent, prefix, suffix string) {
	line := func(s string) { r.out = append(r.out, indent+prefix+s+suffix) }
	if !v.IsValid() {
		line("nil")
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			line("nil")
			return
		}
		r.dynamic(v.Elem(), indent, prefix, suffix)
	case reflect.Pointer:
		if v.IsNil() {
			line("(" + v.Type().String() + ")(nil)")
			return
		}
		if r.depth > 16 {
			line(fmt.Sprintf("%p (nesting too deep)", v.Interface()))
			return
		}
		r.depth++
		r.value(v.Elem(), indent, prefix+"&", suffix)
		r.depth--
	case reflect.Struct:
		if s, ok := stringer(v); ok {
			line(s)
			return
		}
		r.open(v, indent, prefix)
		for i := range v.NumField() {
			r.value(v.Field(i), indent+"\t", v.Type().Field(i).Name+": ", ",")
		}
		r.out = append(r.out, indent+"}"+suffix)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			line(v.Type().String() + "(nil)")
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			line(fmt.Sprintf("%s(%q)", v.Type(), v.Bytes()))
			return
		}
		r.open(v, indent, prefix)
		for i := range v.Len() {
			r.value(v.Index(i), indent+"\t", "", ",")
		}
		r.out = append(r.out, indent+"}"+suffix)
	case reflect.Map:
		if v.IsNil() {
			line(v.Type().String() + "(nil)")
			return
		}
		r.open(v, indent, prefix)
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			return strings.Compare(fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b))
		})
		for _, k := range keys {
			r.value(v.MapIndex(k), indent+"\t", fmt.Sprintf("%#v: ", k), ",")
		}
		r.out = append(r.out, indent+"}"+suffix)
	case reflect.String:
		line(fmt.Sprintf("%q", v.String()))
	default:
		if s, ok := stringer(v); ok {
			line(s)
			return
		}
		line(fmt.Sprintf("%#v", v))
	}
}

func (r *renderer) open(v reflect.Value, indent, prefix string) {
	r.out = append(r.out, indent+prefix+v.Type().String()+"{")
}

// stringer returns v's String() if it has one that can be called
// (exported, so readable through reflection).
func stringer(v reflect.Value) (string, bool) {
	if !v.CanInterface() {
		return "", false
	}
	s, ok := v.Interface().(fmt.Stringer)
	if !ok {
		return "", false
	}
	return s.String(), true
}

// lines is a line diff of want and got (longest common subsequence):
// changed lines with up to context unchanged lines around them.
func lines(want, got []string) string {
	const context = 2
	// lcs[i][j]: length of the longest common subsequence of want[i:], got[j:].
	lcs := make([][]int, len(want)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(got)+1)
	}
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(got) - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type edit struct {
		op   byte // ' ', '-', '+'
		text string
	}
	var edits []edit
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case i < len(want) && j < len(got) && want[i] == got[j]:
			edits = append(edits, edit{' ', want[i]})
			i, j = i+1, j+1
		case i < len(want) && (j == len(got) || lcs[i+1][j] >= lcs[i][j+1]):
			edits = append(edits, edit{'-', want[i]})
			i++
		default:
			edits = append(edits, edit{'+', got[j]})
			j++
		}
	}
	near := func(k int) bool {
		for d := max(0, k-context); d <= min(len(edits)-1, k+context); d++ {
			if edits[d].op != ' ' {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	skipped := false
	for k, e := range edits {
		if e.op == ' ' && !near(k) {
			if !skipped {
				b.WriteString("  ...\n")
			}
			skipped = true
			continue
		}
		skipped = false
		b.WriteByte(e.op)
		b.WriteByte(' ')
		b.WriteString(e.text)
		b.WriteByte('\n')
	}
	return b.String()
}
