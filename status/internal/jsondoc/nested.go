package jsondoc

import "errors"

// Members calls fn with the name and the exact value bytes of each member
// of the JSON object data, which json.Valid accepts, in order, and stops at
// the first error fn returns. A name that is not UTF-8 or holds a lone
// surrogate is an error. For types under package status that decode an
// object nested in a document by these rules (status/slots).
func Members(data []byte, fn func(name string, value []byte) error) error {
	return members(data, fn)
}

// String decodes the JSON string tok, refusing bytes that are not UTF-8 and
// lone surrogates, as a document's declared strings are.
func String(tok []byte) (string, error) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", errNotString
	}
	return unquote(tok)
}

var errNotString = errors.New("not a JSON string")
