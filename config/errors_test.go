package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentstate/core/config"
)

// A hostile key of 80 KB gives a short message that still shows where the
// key starts and ends, while the *Error's fields keep it whole.
func TestErrorsShortenHostileKeys(t *testing.T) {
	long := "s" + strings.Repeat("é", 40<<10) + "e" // 80 KB, multi-byte runes
	dotted := strings.Repeat("seg.", 200) + long    // many segments, under the limit
	c := config.New()
	mustSet(t, c, "name", "svc")
	type tc = struct {
		err        error
		is         error
		key, shows string
	}
	for name, tc := range map[string]tc{
		"unsupported value": {c.Set(long, func() {}), config.ErrUnsupported, long, "unsupported type func()"},
		"empty segment":     {c.Set(long+"..x", 1), config.ErrInvalidKey, long + "..x", "empty segment"},
		"too many segments": {c.Set(strings.Repeat("x.", 300)+long, 1), config.ErrInvalidKey, strings.Repeat("x.", 300) + long, "more than 256 segments"},
		"not a section":     {c.Set("name."+dotted, 1), config.ErrNotSection, "name." + dotted, `"name" holds a string`},
		"not found":         {c.Snapshot().Lookup(long, new(int)), config.ErrNotFound, long, "not found"},
		"decode":            {decodeErr(c.Snapshot(), long), config.ErrNotFound, long, "not found"},
		"bad section key":   {c.Set("k", map[string]any{long + ".x": 1}), config.ErrUnsupported, "k", "contains '.'"},
		"load":              {c.Load(strings.NewReader(`{"` + long + `.x": 1}`)), config.ErrUnsupported, "", "contains '.'"},
		"env":               {c.FromEnv("AGENTS", []string{"AGENTS_" + long + "=1", "AGENTS_" + strings.ToUpper(long) + "=2"}), config.ErrInvalidKey, "", "names the key"},
	} {
		var ce *config.Error
		if !errors.As(tc.err, &ce) || !errors.Is(tc.err, tc.is) {
			t.Errorf("%s: %.300v, want an *Error matching %v", name, tc.err, tc.is)
			continue
		}
		msg := ce.Error()
		if len(msg) > 1024 || !utf8.ValidString(msg) || !strings.Contains(msg, tc.shows) {
			t.Errorf("%s: a %d-byte message (valid UTF-8: %v) %.300q; want at most 1 KB containing %q",
				name, len(msg), utf8.ValidString(msg), msg, tc.shows)
		}
		if tc.key != "" && ce.Key != tc.key {
			t.Errorf("%s: Key holds %d bytes, want the whole key (%d)", name, len(ce.Key), len(tc.key))
		}
		if ce.Key == long && (!strings.Contains(msg, "config: "+ce.Op+" sé") || !strings.Contains(msg, "ée")) {
			t.Errorf("%s: the message does not show the key's start and end: %.300q", name, msg)
		}
	}
}

func decodeErr(s *config.Snapshot, key string) error {
	_, err := config.Decode[int](s, key)
	return err
}

// File errors name the file once, and still match the os errors.
func TestFileErrorsNameThePathOnce(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	c := config.New()
	err := c.LoadFile(missing)
	if !errors.Is(err, os.ErrNotExist) || strings.Count(err.Error(), missing) != 1 {
		t.Errorf("LoadFile(missing) = %v, want os.ErrNotExist naming the path once", err)
	}
	var pe *os.PathError
	if !errors.As(err, &pe) {
		t.Errorf("LoadFile(missing) = %v, want the *os.PathError in the chain", err)
	}
	noDir := filepath.Join(missing, "x.json")
	if err := c.SaveFile(noDir, 0o600); err == nil || strings.Count(err.Error(), noDir) != 1 {
		t.Errorf("SaveFile(no dir) = %v, want an error naming the path once", err)
	}
}
