package config

import (
	"strings"
	"testing"
)

// splitEach is the plain statement of what a key is, for checkDotted to be
// compared with: count the segments, then look at each.
func splitEach(key string) string {
	switch {
	case key == "":
		return "empty key"
	case strings.Count(key, ".") >= maxDepth:
		return "more than 256 segments"
	}
	for _, s := range strings.Split(key, ".") {
		if s == "" {
			return "empty segment"
		}
	}
	return ""
}

// checkDotted, which reads a key once without splitting it, judges every
// key as splitting it would, with the same reason.
func TestCheckDottedAgreesWithSplitting(t *testing.T) {
	var keys []string
	var walk func(string)
	walk = func(k string) { // every key of at most 10 bytes over "a" and "."
		keys = append(keys, k)
		if len(k) < 10 {
			walk(k + "a")
			walk(k + ".")
		}
	}
	walk("")
	// Around the segment limit, with empty segments at either end too.
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		body := strings.Repeat("a.", n)
		keys = append(keys, body, body+"a", "."+body+"a", "."+body, strings.Repeat(".", n), "a"+strings.Repeat(".", n)+"a")
	}
	for _, k := range keys {
		got := ""
		if err := checkDotted(k); err != nil {
			got = strings.TrimPrefix(err.Error(), ErrInvalidKey.Error()+": ")
		}
		if want := splitEach(k); got != want {
			t.Fatalf("checkDotted(%.40q, %d bytes) = %q, splitting says %q", k, len(k), got, want)
		}
	}
}
