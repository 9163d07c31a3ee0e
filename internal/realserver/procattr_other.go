//go:build !linux

package realserver

import "syscall"

// serverProcAttr is nil where the kernel offers no parent-death signal: there a
// test binary killed by `go test -timeout` can leave llama-server running.
func serverProcAttr() *syscall.SysProcAttr { return nil }
