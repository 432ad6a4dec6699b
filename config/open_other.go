//go:build !unix

package config

// openFlags: opening a file does not block here (see open_unix.go).
const openFlags = 0
