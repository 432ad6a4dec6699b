package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadYAML is Load from a YAML document: a mapping at the top, decoded into
// the same values as the equivalent JSON, so that a configuration behaves
// the same whichever format it was written in:
//
//   - integers that fit an int64 become int64 (0x1F and 1_000 included),
//     other numbers float64; .inf and .nan are refused, as JSON cannot
//     hold them, and so is a number beyond the float64 range (1e400),
//     which YAML would read as a string and JSON refuses (quote it for
//     the string);
//   - a string holding NUL is refused, as Load refuses it (YAML itself
//     refuses bytes that are not UTF-8);
//   - timestamps (an unquoted 2026-01-02) stay strings, exactly as
//     written, as they would be in JSON; the Time getter and [Decode] parse
//     RFC 3339 strings;
//   - anchors, aliases and merge keys (<<) are expanded; a document that
//     expands aliases excessively (a "billion laughs") is refused;
//   - mapping keys must be strings: a key such as 80 or true is refused
//     with its line number (quote it), as are !!binary values, tags other
//     than YAML's own, a second document in the stream, and the limits
//     Load enforces (no empty key or '.' in a section key, at most 256
//     levels).
//
// On any error c is unchanged.
func (c *Config) LoadYAML(r io.Reader) error {
	return c.load(r, "", decodeYAML)
}

// SaveYAML writes the content of c to w as YAML: the values Save would
// write as JSON (same types, same errors), in block style with two-space
// indentation and sorted keys. Strings that would read back as another
// type ("8080", "true", "2026-01-02") are quoted, so LoadYAML gives back
// what LoadYAML or Load produced.
func (c *Config) SaveYAML(w io.Writer) error {
	return c.save(w, (*Snapshot).marshalYAML)
}

// decodeYAML reads one YAML document whose top is a mapping.
func decodeYAML(r io.Reader) (map[string]any, error) {
	dec := yaml.NewDecoder(r)
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("empty YAML document, want a mapping")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, errors.New("more than one YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: YAML %s, want a mapping", root.Line, root.ShortTag())
	}
	if verr := checkYAML(root); verr != nil {
		return nil, verr
	}
	var m map[string]any
	if err := root.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// checkYAML refuses, with a line number, what the config cannot hold, and
// retags timestamps as strings so that decoding keeps their text. Aliases
// are not followed: the node they name is checked where it is defined.
func checkYAML(n *yaml.Node) *valueError {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				if err := checkYAML(v); err != nil {
					return err.push(".<<")
				}
				continue
			}
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!timestamp" {
				k.Tag = "!!str"
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return &valueError{msg: fmt.Sprintf("line %d: mapping key %s is a YAML %s, not a string (quote it)",
					k.Line, describeNode(k), k.ShortTag())}
			}
			if err := checkYAML(v); err != nil {
				return err.push("." + k.Value)
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if err := checkYAML(e); err != nil {
				return err.push("[" + strconv.Itoa(i) + "]")
			}
		}
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!str":
			if err := checkString(n.Value); err != nil {
				err.msg = fmt.Sprintf("line %d: %s", n.Line, err.msg)
				return err
			}
			if n.Style == 0 && outOfRange(n.Value) {
				// YAML reads a number beyond float64 as a string; JSON
				// refuses it (see normalize), and so does LoadYAML.
				return &valueError{msg: fmt.Sprintf("line %d: number %s is out of the float64 range (quote it for a string)", n.Line, n.Value)}
			}
		case "!!int", "!!float", "!!bool", "!!null":
		case "!!timestamp":
			n.Tag = "!!str"
		default:
			return &valueError{msg: fmt.Sprintf("line %d: YAML %s values are not supported", n.Line, tag)}
		}
	}
	return nil
}

// describeNode shows a short node in an error message.
func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && len(n.Value) <= 40 {
		return strconv.Quote(n.Value)
	}
	return "at column " + strconv.Itoa(n.Column)
}

// marshalYAML encodes the values Save writes (see SaveYAML).
func (s *Snapshot) marshalYAML() ([]byte, error) {
	data, err := s.marshal()
	if err != nil {
		return nil, err
	}
	v, err := decodeJSONValue(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(yamlValue(v)); err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// yamlValue prepares decoded JSON for the YAML encoder: an integer that
// fits is an int64, and any other number keeps its JSON literal (3.0,
// 1e+21), which YAML reads as the same float.
func yamlValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: string(x)}
	case map[string]any:
		for k, e := range x {
			x[k] = yamlValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = yamlValue(e)
		}
	}
	return v
}

// yamlFloat is the syntax of a YAML 1.2 float that go.yaml.in/yaml/v3
// resolves as a number when strconv can hold it (underscores removed).
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// outOfRange reports whether a plain scalar is written as a number but
// lies beyond the float64 range, so that the YAML decoder made it a string.
func outOfRange(v string) bool {
	v = strings.ReplaceAll(v, "_", "")
	if !yamlFloat.MatchString(v) {
		return false
	}
	_, err := strconv.ParseFloat(v, 64)
	return errors.Is(err, strconv.ErrRange)
}
