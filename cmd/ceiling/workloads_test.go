package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// TestRecordWorkloadFlags: bad length, mix and replay flags exit 2 naming the flag
// and the syntax; good ones reach the plan.
func TestRecordWorkloadFlags(t *testing.T) {
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--prompt-tokens", "normal:2000"}, `--prompt-tokens "normal:2000": want two numbers separated by ","`},
		{[]string{"--output-tokens", "zipf:3"}, `--output-tokens "zipf:3": unknown distribution "zipf"; want N, uniform:MIN-MAX`},
		{[]string{"--prompt-tokens", "-5"}, `--prompt-tokens "-5": want a positive whole number`},
		{[]string{"--prefix-mix", "0.5,x"}, "--prefix-mix: \"x\" is not a non-negative number"},
		{[]string{"--burstiness", "0.5"}, "--burstiness shapes open-loop arrivals"},
	}
	for _, tt := range bad {
		args := append([]string{"--url", "http://127.0.0.1:1", "--concurrency", "1", "-o", "x.parquet"}, tt.args...)
		code, _, stderr := runRecordArgs(nil, args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	out := filepath.Join(t.TempDir(), "run.parquet")
	code, _, stderr := runRecordArgs(nil, "--url", eng.URL(), "--rate", "50", "--burstiness", "0.5",
		"--requests-per-level", "8", "--prompt-tokens", "uniform:20-40", "--output-tokens", "normal:8,2", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, _, err := trace.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if p := info.Plan; p.PromptLengths != "uniform:20-40" || p.OutputLengths != "normal:8,2" || p.Burstiness != 0.5 {
		t.Errorf("plan %+v", p)
	}
}
