// Package payload makes self-validating file contents for tests of
// concurrent and interrupted writes: a reader can tell a whole payload from
// a torn, truncated, empty or mixed one without knowing what was written.
//
// A payload is a header "<body length> <crc32 of body>\n" and a body that
// starts with "seq=<n>;" and is padded with a letter that depends on n.
// It imports only the standard library, so the tests inside the library
// packages may use it (see internal/deepdiff).
package payload

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
)

const header = 10 + 1 + 8 + 1

// Make returns the payload with sequence number seq and a body of at least
// size bytes.
func Make(seq, size int) []byte {
	body := []byte("seq=" + strconv.Itoa(seq) + ";")
	body = append(body, bytes.Repeat([]byte{byte('a' + seq%26)}, max(0, size-len(body)))...)
	return append(fmt.Appendf(nil, "%010d %08x\n", len(body), crc32.ChecksumIEEE(body)), body...)
}

// Size varies a payload's size with seq, so that torn reads also show as
// length mismatches, not only checksum mismatches.
func Size(seq int) int { return 100 + (seq%5)*4000 }

// Check returns the sequence number of a valid payload, or why b is not one.
func Check(b []byte) (seq int, err error) {
	if len(b) < header {
		return 0, fmt.Errorf("short file: %d bytes", len(b))
	}
	var n int
	var sum uint32
	if _, err := fmt.Sscanf(string(b[:header]), "%010d %08x\n", &n, &sum); err != nil {
		return 0, fmt.Errorf("bad header %q: %v", b[:header], err)
	}
	body := b[header:]
	if len(body) != n {
		return 0, fmt.Errorf("body has %d bytes, header says %d", len(body), n)
	}
	if crc32.ChecksumIEEE(body) != sum {
		return 0, fmt.Errorf("checksum mismatch (mixed or torn content)")
	}
	end := bytes.IndexByte(body, ';')
	if !bytes.HasPrefix(body, []byte("seq=")) || end < 0 {
		return 0, fmt.Errorf("no sequence number")
	}
	return strconv.Atoi(string(body[4:end]))
}
