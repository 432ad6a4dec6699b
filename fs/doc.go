// Package fs provides sandboxed, crash-safe, durable atomic file writes.
//
// This file is a placeholder package doc; the fs issue owns it.
package fs
