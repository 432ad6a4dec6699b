// Package yaml is a stand-in for a YAML library whose decoder statuslint
// cannot follow (reflection): only the shape of the call, content and a
// pointer, says that it decodes.
package yaml

func Unmarshal(in []byte, out any) error { return nil }

func Marshal(in any) ([]byte, error) { return nil, nil }
