package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// twoShardTraces records the two shards of one short sweep in this process and
// returns their traces: inputs merge accepts.
func twoShardTraces(t *testing.T) []string {
	t.Helper()
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	t.Cleanup(eng.Close)
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "run-0.parquet"), filepath.Join(dir, "run-1.parquet")}
	var wg sync.WaitGroup
	errs := make([]string, len(files))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, stderr := runCLI("record", "--url", eng.URL(), "--shard", []string{"0/2", "1/2"}[i], "--run-id", "r",
				"--concurrency", "2", "--duration-per-level", "1s", "--prompt-tokens", "10", "--output-tokens", "4",
				"--metrics-url", "off", "-o", f)
			if code != exitOK {
				errs[i] = stderr
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("shard %d: %s", i, e)
		}
	}
	return files
}

// Issue 31 item 6: `merge -o X --force` replaced a FIFO or a device node with a
// regular file (as root, -o /dev/null would have been destroyed). merge follows
// the rule of every other writer: anything but a regular file is never replaced,
// even with --force, nor is an input; a regular file is replaced with --force.
func TestMergeNeverReplacesSpecialFiles(t *testing.T) {
	files := twoShardTraces(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.parquet")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	sidecarFIFO := filepath.Join(dir, "side.parquet")
	if err := syscall.Mkfifo(trace.MetricsPath(sidecarFIFO), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		out     string
		watch   string // must be unchanged
		wantErr string
	}{
		{"a FIFO", fifo, fifo, "named pipe"},
		{"/dev/null", os.DevNull, os.DevNull, "device"},
		{"a symlink", link, link, "symbolic link"},
		{"a FIFO as the sidecar", sidecarFIFO, trace.MetricsPath(sidecarFIFO), "named pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, beforeVictim := fileState(t, tt.watch), fileState(t, victim)
			code, _, stderr := runCLI(append(append([]string{"merge"}, files...), "-o", tt.out, "--force")...)
			if code == exitOK || !strings.Contains(stderr, tt.wantErr) || !strings.Contains(stderr, tt.watch) {
				t.Errorf("exit %d, want a refusal naming %s as %s:\n%s", code, tt.watch, tt.wantErr, stderr)
			}
			if after := fileState(t, tt.watch); after != before {
				t.Errorf("%s was replaced (now %.12q, was %.40q)", tt.watch, after, before)
			}
			if after := fileState(t, victim); after != beforeVictim {
				t.Errorf("the symlink's target changed")
			}
		})
	}
	// Still allowed: an existing merged trace replaced with --force, and refused without.
	out := filepath.Join(dir, "merged.parquet")
	if err := os.WriteFile(out, []byte("PAR1 old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(append(append([]string{"merge"}, files...), "-o", out)...); code == exitOK || !strings.Contains(stderr, "--force") {
		t.Errorf("merge over an existing trace without --force: exit %d, want a refusal naming --force:\n%s", code, stderr)
	}
	if code, _, stderr := runCLI(append(append([]string{"merge"}, files...), "-o", out, "--force")...); code != exitOK {
		t.Fatalf("merge --force over a regular file: exit %d\n%s", code, stderr)
	}
}
