package record

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// Issue 18 item 6: while a recording runs, a second recorder of the same output, a
// --resume and a --force all refuse, naming the live process, and the live run's
// parts and numbers are untouched; a lock left by a dead process is recognised as
// stale and taken over.
func TestSecondRecorderRefusedWhileLive(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TokenGap: 20 * time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.OutputTokens = 10
	done := make(chan error, 1)
	go func() {
		_, err := Record(context.Background(), o)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(trace.PartsDir(o.Output)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first recorder never created its parts directory")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, tt := range []struct {
		name          string
		resume, force bool
	}{{"second recorder", false, false}, {"--resume", true, false}, {"--force", false, true}} {
		o2 := o
		o2.Resume, o2.Force = tt.resume, tt.force
		_, err := Record(context.Background(), o2)
		if err == nil || !strings.Contains(err.Error(), "being recorded by another process") || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("%s while the run is live: %v, want a refusal naming pid %d", tt.name, err, os.Getpid())
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("the live run: %v", err)
	}
	rows, info := readTrace(t, o.Output)
	if len(rows) != 8 || len(info.Levels) != 2 || len(info.Resumed) != 0 {
		t.Errorf("the live run's trace has %d rows, %d levels, resumed %v: want 8 rows in 2 levels, never resumed", len(rows), len(info.Levels), info.Resumed)
	}
	if _, err := os.Stat(LockPath(o.Output)); !os.IsNotExist(err) {
		t.Errorf("the lock file is left after the run: %v", err)
	}
}

func TestStaleLockTakenOver(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	o := baseOptions(t, eng.URL())
	if err := os.WriteFile(LockPath(o.Output), []byte(strconv.Itoa(dead.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	o.Progress = &progress
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("a stale lock of process %d stopped the run: %v", dead.Process.Pid, err)
	}
	if !strings.Contains(progress.String(), "no longer running") {
		t.Errorf("the stale lock is not mentioned:\n%s", progress.String())
	}
}
