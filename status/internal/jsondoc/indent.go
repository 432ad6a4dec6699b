package jsondoc

// appendIndent appends compact JSON (as produced by encoding/json: no
// insignificant whitespace) to dst, indented like json.Indent(dst, src, "",
// "  "). json.Indent runs the full validating scanner and was the largest
// single cost of encoding a document; src here always comes from
// encoding/json, so a plain pass that only tracks strings suffices.
// FuzzAppendIndent checks it against json.Indent.
func appendIndent(dst, src []byte) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			dst = append(dst, c)
			switch c {
			case '\\':
				if i+1 < len(src) {
					i++
					dst = append(dst, src[i])
				}
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			dst = append(dst, c)
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				i++
				dst = append(dst, src[i])
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
