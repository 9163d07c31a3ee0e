package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileState is what must not change: the kind of file and its bytes.
func fileState(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		return "missing: " + err.Error()
	}
	s := fi.Mode().Type().String()
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(path)
		s += string(b)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(path)
		s += " -> " + l
	}
	return s
}

// Issue 18 items 4 and 5: one rule for every writer (record, report, analyze,
// import). An output that is anything but a regular file (a symbolic link, a FIFO;
// a device is refused by the same mode check) is never replaced, even with --force;
// an input (the trace read, its sidecar, an imported file) is never overwritten,
// even with --force; an existing trace or sidecar is replaced only with --force.
func TestWritersNeverReplaceInputsOrSpecialFiles(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	dir := t.TempDir()
	run := filepath.Join(dir, "run.parquet")
	copyFile(t, "../../samples/llamacpp-d768-4slots.parquet", run)
	copyFile(t, "../../samples/llamacpp-d768-4slots.metrics.parquet", trace.MetricsPath(run))
	other := filepath.Join(dir, "other.parquet")
	copyFile(t, "../../samples/llamacpp-d768-4slots.parquet", other)
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.parquet")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	recordArgs := func(out string, extra ...string) []string {
		return append([]string{"record", "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "2",
			"--prompt-tokens", "20", "--output-tokens", "4", "--metrics-url", "off", "-o", out}, extra...)
	}
	tests := []struct {
		name    string
		args    []string
		target  string // must be unchanged
		wantErr string
	}{
		{"record --force onto a symlink", recordArgs(link, "--force"), link, "symbolic link"},
		{"record --force onto a FIFO", recordArgs(fifo, "--force"), fifo, "named pipe"},
		{"analyze onto its input", []string{"analyze", run, "-o", run, "--force"}, run, "input"},
		{"analyze onto the input's sidecar", []string{"analyze", run, "-o", trace.MetricsPath(run), "--force"}, trace.MetricsPath(run), "input"},
		{"analyze onto another trace", []string{"analyze", run, "-o", other}, other, "--force"},
		{"analyze onto a symlink", []string{"analyze", run, "-o", link}, link, "symbolic link"},
		{"report onto its input", []string{"report", run, "-o", run, "--force"}, run, "input"},
		{"report onto another trace", []string{"report", run, "-o", other}, other, "--force"},
		{"report onto a FIFO", []string{"report", run, "-o", fifo}, fifo, "named pipe"},
		{"import onto a trace", []string{"import", victim, "-o", other}, other, "--force"},
		{"import onto its input", []string{"import", victim, "-o", victim, "--force"}, victim, "input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fileState(t, tt.target)
			beforeVictim := fileState(t, victim)
			code, _, stderr := runCLI(tt.args...)
			if code == exitOK {
				t.Errorf("exit 0, want a refusal")
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantErr, stderr)
			}
			if after := fileState(t, tt.target); after != before {
				t.Errorf("%s changed", tt.target)
			}
			if after := fileState(t, victim); after != beforeVictim {
				t.Errorf("the symlink's target %s changed", victim)
			}
		})
	}
	// Still allowed: a report written again over a report, and a trace replaced with --force.
	html := filepath.Join(dir, "r.html")
	for range 2 {
		if code, _, stderr := runCLI("report", run, "-o", html); code != exitOK {
			t.Fatalf("report written again: exit %d\n%s", code, stderr)
		}
	}
	if code, _, stderr := runCLI("analyze", run, "-o", other, "--force", "--format", "json"); code != exitOK {
		t.Fatalf("analyze --force over another trace: exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(other); bytes.HasPrefix(b, []byte("PAR1")) {
		t.Error("--force did not replace the trace")
	}
}
