// Package goid tells test code which goroutine it runs on, so that a test
// can check that a function ran on its caller's goroutine (the status
// package doc's "fn runs ... on its caller's goroutine"). It is test
// support: the id is read from runtime.Stack, which is slow, and program
// logic must not depend on goroutine identity.
package goid

import (
	"bytes"
	"runtime"
)

// Current returns the id of the calling goroutine, from the header of its
// stack trace ("goroutine 7 [running]:"), or "" if the header has none.
func Current() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}
