// Package fs is a stub of github.com/agentstate/core/fs with the names
// statuslint recognises.
package fs

import "os"

func WriteAtomic(path string, data []byte, perm os.FileMode) error { return nil }

type Fs struct{}

func (*Fs) ReadFile(name string) ([]byte, error)                         { return nil, nil }
func (*Fs) WriteAtomic(name string, data []byte, perm os.FileMode) error { return nil }
func (*Fs) Open(name string) (*os.File, error)                           { return nil, nil }
func (*Fs) MkdirAll(name string, perm os.FileMode) error                 { return nil }

func MkdirAll(path string, perm os.FileMode) error { return nil }
