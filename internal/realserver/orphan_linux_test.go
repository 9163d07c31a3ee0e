package realserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanHelperEnv makes TestServerDiesWithTestProcess's child start a server,
// print its PID and hang, as a test binary does when `go test -timeout` kills it.
const orphanHelperEnv = "REALSERVER_ORPHAN_HELPER"

// TestServerDiesWithTestProcess: a test binary killed mid-test (go test's
// -timeout kills it with no Cleanup run) takes its llama-server with it. Before
// serverProcAttr the server was orphaned and kept serving.
func TestServerDiesWithTestProcess(t *testing.T) {
	if os.Getenv(orphanHelperEnv) == "1" {
		s := Start(t, Options{})
		fmt.Printf("PID %d\n", s.PID)
		time.Sleep(time.Minute) // killed long before
		return
	}
	if testing.Short() {
		t.Skip("real-server test skipped in -short mode")
	}
	serverPaths(t) // skips, or fails in CI, as every real-server test does without a server
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServerDiesWithTestProcess$", "-test.v")
	child.Env = append(os.Environ(), orphanHelperEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		if f, ok := strings.CutPrefix(sc.Text(), "PID "); ok {
			pid, _ = strconv.Atoi(f)
		}
	}
	if pid == 0 {
		_ = child.Process.Kill()
		t.Fatalf("the helper printed no server PID (%v)", child.Wait())
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if gone(pid) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("llama-server (PID %d) outlived the test process that started it by 10 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gone says whether process pid has ended: no such process, or a zombie whose
// parent (here init, the orphan's new parent) has not reaped it yet.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
