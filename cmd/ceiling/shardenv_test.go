package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// envOf is a getenv that knows only vars.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// Issue 31 item 15: {shard} in -o stayed literal when the run was not sharded
// (CEILING_SHARD_COUNT=1 wrote run-{shard}.parquet). A run that is not split is
// shard 0 of 1: {shard} becomes 0, with or without the Job's environment.
func TestShardPlaceholderInUnshardedRun(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	for _, tt := range []struct {
		name string
		env  map[string]string
	}{
		{"one-pod Indexed Job", map[string]string{"JOB_COMPLETION_INDEX": "0", "CEILING_SHARD_COUNT": "1"}},
		{"no shard at all", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runRecordArgs(envOf(tt.env), "--url", eng.URL(), "--concurrency", "1", "--requests-per-level", "2",
				"--prompt-tokens", "20", "--output-tokens", "4", "--metrics-url", "off", "-o", filepath.Join(dir, "run-{shard}.parquet"))
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if _, err := os.Stat(filepath.Join(dir, "run-0.parquet")); err != nil || strings.Contains(strings.Join(names, " "), "{shard}") {
				t.Errorf("wrote %v, want run-0.parquet and no literal {shard}", names)
			}
		})
	}
}

// Issue 31 item 16: in a Kubernetes Indexed Job (which always sets
// JOB_COMPLETION_INDEX) `record --shard 0/3` was refused because
// CEILING_SHARD_COUNT was unset. An explicit --shard wins; where the environment
// disagrees with it, a warning names both; where it agrees, nothing is said.
func TestExplicitShardWinsOverEnvironment(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	for _, tt := range []struct {
		name     string
		env      map[string]string
		wantWarn []string // "" = no warning
	}{
		{"index only, disagreeing", map[string]string{"JOB_COMPLETION_INDEX": "2"}, []string{"--shard 0/3", "JOB_COMPLETION_INDEX=2"}},
		{"index only, agreeing", map[string]string{"JOB_COMPLETION_INDEX": "0"}, nil},
		{"both, other count", map[string]string{"JOB_COMPLETION_INDEX": "0", "CEILING_SHARD_COUNT": "4"}, []string{"--shard 0/3", "CEILING_SHARD_COUNT=4"}},
		{"both, agreeing", map[string]string{"JOB_COMPLETION_INDEX": "0", "CEILING_SHARD_COUNT": "3"}, nil},
		{"malformed index", map[string]string{"JOB_COMPLETION_INDEX": "x"}, []string{"--shard 0/3", `JOB_COMPLETION_INDEX="x"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run-{shard}.parquet")
			code, _, stderr := runRecordArgs(envOf(tt.env), "--url", eng.URL(), "--shard", "0/3", "--run-id", "r",
				"--concurrency", "3", "--duration-per-level", "1s", "--prompt-tokens", "20", "--output-tokens", "4", "--metrics-url", "off", "-o", out)
			if code != exitOK {
				t.Fatalf("exit %d, want the explicit --shard to run:\n%s", code, stderr)
			}
			if _, err := os.Stat(strings.Replace(out, "{shard}", "0", 1)); err != nil {
				t.Errorf("the trace of shard 0 (of --shard) was not written: %v", err)
			}
			warned := strings.Contains(stderr, "warning") && strings.Contains(stderr, "--shard")
			if len(tt.wantWarn) == 0 && warned {
				t.Errorf("a warning where the environment agrees with --shard:\n%s", stderr)
			}
			for _, w := range tt.wantWarn {
				if !strings.Contains(stderr, w) {
					t.Errorf("the warning does not name %q:\n%s", w, stderr)
				}
			}
		})
	}
}
