package fs

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strconv"
)

// Self-validating payloads: a header "<body length> <crc32 of body>\n",
// then a body that starts with "seq=<n>;" and is padded with a letter that
// depends on n. A torn, truncated, empty or mixed file fails validation.
func makePayload(seq, size int) []byte {
	body := []byte("seq=" + strconv.Itoa(seq) + ";")
	body = append(body, bytes.Repeat([]byte{byte('a' + seq%26)}, max(0, size-len(body)))...)
	return append(fmt.Appendf(nil, "%010d %08x\n", len(body), crc32.ChecksumIEEE(body)), body...)
}

// checkPayload returns the sequence number of a valid payload.
func checkPayload(b []byte) (seq int, err error) {
	const hdr = 10 + 1 + 8 + 1
	if len(b) < hdr {
		return 0, fmt.Errorf("short file: %d bytes", len(b))
	}
	var n int
	var sum uint32
	if _, err := fmt.Sscanf(string(b[:hdr]), "%010d %08x\n", &n, &sum); err != nil {
		return 0, fmt.Errorf("bad header %q: %v", b[:hdr], err)
	}
	body := b[hdr:]
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
