package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// syncBuffer is a strings.Builder safe to read while a child process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRecorder runs `ceiling record` as a child process (see TestMain).
func startRecorder(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, <-chan error) {
	t.Helper()
	child := exec.Command(os.Args[0], append([]string{"record"}, args...)...)
	child.Env = append(os.Environ(), "CEILING_TEST_MAIN=1")
	stderr := &syncBuffer{}
	child.Stderr = stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { _ = child.Process.Kill() })
	return child, stderr, exited
}

func waitFor(t *testing.T, what string, stderr *syncBuffer, exited <-chan error, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case err := <-exited:
			t.Fatalf("the recorder exited before %s: %v\n%s", what, err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %s\n%s", what, stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Issue 8 item 14: a second Ctrl-C during the grace period stops at once: the
// requests in flight are recorded as cancelled, the trace sealed, exit 130.
func TestSecondInterruptStopsAtOnce(t *testing.T) {
	// Each request takes 10 s; the grace period is a minute.
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 50 * time.Millisecond})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	child, stderr, exited := startRecorder(t, "--url", eng.URL(), "--concurrency", "2", "--requests-per-level", "8",
		"--prompt-tokens", "20", "--output-tokens", "200", "--grace", "60s", "-o", out)
	waitFor(t, "sending the sweep's requests", stderr, exited, func() bool { return eng.Running() >= 2 && len(eng.Log()) >= 3 })
	if err := child.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "starting the grace period", stderr, exited, func() bool { return strings.Contains(stderr.String(), "interrupted: waiting") })
	second := time.Now()
	if err := child.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after the second Ctrl-C\n%s", stderr.String())
	}
	if d := time.Since(second); d > 5*time.Second {
		t.Errorf("took %v to stop after the second Ctrl-C", d)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d\n%s", err, exitInterrupted, stderr.String())
	}
	_, rows, rerr := trace.ReadFile(out)
	if rerr != nil {
		t.Fatalf("no sealed trace after the second Ctrl-C: %v\n%s", rerr, stderr.String())
	}
	cancelled := 0
	for _, r := range rows {
		if r.Error != nil && *r.Error == "cancelled" {
			cancelled++
		}
	}
	if cancelled != 2 {
		t.Errorf("%d rows recorded as cancelled, want the 2 in flight (%d rows)", cancelled, len(rows))
	}
}

// Issue 8 item 19: a kill -9 during level 0 leaves a parts directory with no sealed
// level; --resume and a fresh run say what to do, and --force replaces it.
func TestKill9InFirstLevel(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 20 * time.Millisecond})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	args := []string{"--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "2",
		"--prompt-tokens", "20", "--output-tokens", "50", "--metrics-url", "off", "-o", out}
	child, stderr, exited := startRecorder(t, args...)
	waitFor(t, "starting level 0", stderr, exited, func() bool { return len(eng.Log()) >= 2 })
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if _, err := os.Stat(out + ".parts"); err != nil {
		t.Fatalf("the kill left no parts directory: %v", err)
	}
	for _, extra := range [][]string{{"--resume"}, nil} {
		code, _, msg := runRecordArgs(nil, append(args, extra...)...)
		if code == 0 || !strings.Contains(msg, "--force") {
			t.Errorf("record %v after a kill in level 0: exit %d, stderr:\n%s\nwant advice naming --force", extra, code, msg)
		}
	}
	code, _, msg := runRecordArgs(nil, append(args, "--force")...)
	if code != 0 {
		t.Fatalf("--force: exit %d\n%s", code, msg)
	}
	if _, rows, err := trace.ReadFile(out); err != nil || len(rows) != 2 {
		t.Fatalf("after --force: %d rows, %v", len(rows), err)
	}
}
