//go:build linux && !amd64 && !386

package syncshare

import "syscall"

const sysSyncfs = syscall.SYS_SYNCFS
