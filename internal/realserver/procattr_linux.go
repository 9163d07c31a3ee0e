package realserver

import "syscall"

// serverProcAttr has the kernel kill llama-server when the test process that
// started it dies: a test binary killed by `go test -timeout` runs no Cleanup,
// and an orphaned server would hold its port and both cores until someone
// noticed. (The signal follows the thread that started the server; the Go
// runtime retires a thread only under a goroutine that locked it and exited,
// which no test here does.)
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
