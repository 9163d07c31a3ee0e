package importer

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The older per-request schema (info {input_tokens, output_tokens,
// output_token_times}, as inference-perf's docs and downstream converters show it),
// without stage summaries: one level placed at its peak concurrency, with a
// warning; tokens of one chunk share a time and make one chunk; an HTTP error keeps
// its status.
func TestInferencePerfOldSchema(t *testing.T) {
	dir := t.TempDir()
	body := `[
 {"start_time": 1393.251, "end_time": 1393.600, "request": "{\"model\": \"m\"}", "response": "",
  "info": {"input_tokens": 591, "output_tokens": 4, "output_token_times": [1393.381, 1393.381, 1393.45, 1393.59]}, "error": null},
 {"start_time": 1393.300, "end_time": 1393.700, "request": "{}", "response": "",
  "info": {"input_tokens": 20, "output_tokens": 2, "output_token_times": [1393.5, 1393.69]}, "error": null},
 {"start_time": 1393.350, "end_time": 1393.360, "request": "{}", "response": null,
  "info": {"input_tokens": 7}, "error": {"error_type": "HTTP Error 429", "error_msg": "rate limited"}}
]`
	path := filepath.Join(dir, "per_request_lifecycle_metrics.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Import(context.Background(), []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Tool != FromInferencePerf || len(run.Levels) != 1 {
		t.Fatalf("%s with %d levels", run.Tool, len(run.Levels))
	}
	l := run.Levels[0]
	if l.Concurrency != 3 || !strings.Contains(strings.Join(run.Warnings, "\n"), "peak measured concurrency 3") {
		t.Errorf("level at c=%d, warnings %q: want the peak in flight, 3, said", l.Concurrency, run.Warnings)
	}
	r0 := l.Requests[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if r0.SentNs != 0 || !near(*r0.TTFT, 0.13) || !near(*r0.E2E, 0.349) || len(r0.Gaps) != 2 || !near(r0.Gaps[0], 0.069) || *r0.Output != 4 || *r0.Prompt != 591 {
		t.Errorf("first request %+v (ttft %v, e2e %v, gaps %v)", r0, *r0.TTFT, *r0.E2E, r0.Gaps)
	}
	if r := l.Requests[1]; r.SentNs != 49_000_000 || *r.Output != 2 {
		t.Errorf("second request sent at %d ns, want 49 ms after the first", r.SentNs)
	}
	if r := l.Requests[2]; r.Status != 429 || r.TTFT != nil || !strings.Contains(r.Err, "rate limited") {
		t.Errorf("failed request %+v", r)
	}
}
