package record

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// Issue 31 items 3 and 4: a lock path that is not a regular file is refused with
// an error naming it, before anything is written or read through it. A symbolic
// link was followed and its target truncated to the recorder's pid ("IMPORTANT
// DATA" lost); a FIFO blocked the recorder forever before the probe.
func TestLockPathNotRegularRefused(t *testing.T) {
	const precious = "IMPORTANT DATA\n"
	tests := []struct {
		name     string
		make     func(t *testing.T, lock string)
		wantKind string
	}{
		{"symbolic link to a file", func(t *testing.T, lock string) {
			target := filepath.Join(t.TempDir(), "precious.txt")
			if err := os.WriteFile(target, []byte(precious), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, lock); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"FIFO", func(t *testing.T, lock string) {
			if err := syscall.Mkfifo(lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "named pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
			defer eng.Close()
			o := baseOptions(t, eng.URL())
			lock := LockPath(o.Output)
			tt.make(t, lock)
			done := make(chan error, 1)
			go func() {
				_, err := Record(context.Background(), o)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the recorder still runs after 10 s with %s as its lock (it hangs)", tt.name)
			}
			if err == nil || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), tt.wantKind) {
				t.Errorf("error %v, want a refusal naming %s and saying it is a %s", err, lock, tt.wantKind)
			}
			if n := len(eng.Log()); n != 0 {
				t.Errorf("%d requests were sent before the refusal", n)
			}
			if st, err := os.Lstat(lock); err != nil || st.Mode().Type() == 0 {
				t.Errorf("the lock path was replaced or removed: %v %v", st, err)
			}
			if tt.wantKind == "symbolic link" {
				got, err := os.ReadFile(lock) // through the link: the target
				if err != nil || string(got) != precious {
					t.Errorf("the link's target holds %q (%v), want it unchanged: %q", got, err, precious)
				}
			}
		})
	}
}

// Issue 31 item 14: a lock file naming a process that is alive but does not hold
// the lock (a reused pid, or a file copied from elsewhere) was reported as "left by
// process N, which is no longer running". The message says what is true.
func TestStaleLockOfLiveProcess(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	alive := exec.Command("sleep", "60")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = alive.Process.Kill()
		_ = alive.Wait()
	}()
	o := baseOptions(t, eng.URL())
	pid := alive.Process.Pid
	if err := os.WriteFile(LockPath(o.Output), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	o.Progress = &progress
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("a stale lock naming live process %d stopped the run: %v", pid, err)
	}
	msg := progress.String()
	if strings.Contains(msg, "no longer running") {
		t.Errorf("process %d is running, but the message says it is not:\n%s", pid, msg)
	}
	if !strings.Contains(msg, "pid "+strconv.Itoa(pid)) && !strings.Contains(msg, "process "+strconv.Itoa(pid)) || !strings.Contains(msg, "does not hold") {
		t.Errorf("the message does not say that process %d is alive but does not hold the lock:\n%s", pid, msg)
	}
}
