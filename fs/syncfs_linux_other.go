//go:build linux && !amd64 && !386

package fs

import "syscall"

const sysSyncfs = syscall.SYS_SYNCFS
