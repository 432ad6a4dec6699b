package syncshare

// The syscall package has no SYS_SYNCFS on amd64 and 386.
const sysSyncfs = 306
