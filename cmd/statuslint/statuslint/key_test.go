package statuslint

import "testing"

func TestCollapseRepeats(t *testing.T) {
	for in, want := range map[string]string{
		"\x000\x00.Config.Config.Config.path": "\x000\x00.Config.path",
		"\x000\x00.Config.path":               "\x000\x00.Config.path",
		"x.base.baseline":                     "x.base.baseline",
		"f(x.a.b.a.b)":                        "f(x.a.b.a.b)",
		"x.ab.a":                              "x.ab.a",
	} {
		if got := collapseRepeats(in); got != want {
			t.Errorf("collapseRepeats(%q) = %q, want %q", in, got, want)
		}
	}
}
