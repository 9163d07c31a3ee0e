package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18 item 10: hostile or broken imports. Every imported value is checked
// (finite, in range, non-negative): a level value out of range refuses the file,
// naming it and the field; a request with an impossible value is excluded, and a
// warning names the file, the level and the field. Before, 1e15 wrapped to a
// negative concurrency, 2^40 tokens became 0, NaN or 1e300 seconds became −9.2e9 s,
// negative latencies made valid levels, and a NaN duration an internal error.
func TestHostileImportValues(t *testing.T) {
	good := `"ttfts": [0.1, 0.1], "itls": [[0.01], [0.01]]`
	tests := []struct {
		name, body string
		wantErr    []string // the file is refused
		wantWarn   []string // one request excluded, with a warning
	}{
		{"conc.json", `{"duration": 1, "completed": 2, "max_concurrency": 1e15, ` + good + `}`, []string{"conc.json", "concurrency", "out of range"}, nil},
		{"nandur.jsonl", `{"backend": "sglang", "duration": NaN, "completed": 2, "max_concurrency": 2, ` + good + `}`, []string{"nandur.jsonl", "duration", "NaN"}, nil},
		{"hugedur.json", `{"duration": 1e300, "completed": 2, "max_concurrency": 2, ` + good + `}`, []string{"hugedur.json", "duration"}, nil},
		{"outlen.json", `{"duration": 1, "completed": 2, "max_concurrency": 2, "output_lens": [1099511627776, 2], ` + good + `}`, nil, []string{"outlen.json", "output tokens", "1099511627776"}},
		{"negttft.json", `{"duration": 1, "completed": 2, "max_concurrency": 2, "ttfts": [-0.5, 0.1], "itls": [[0.01], [0.01]]}`, nil, []string{"negttft.json", "ttft", "-0.5"}},
		{"hugettft.json", `{"duration": 1, "completed": 2, "max_concurrency": 2, "ttfts": [1e300, 0.1], "itls": [[0.01], [0.01]]}`, nil, []string{"hugettft.json", "ttft"}},
		{"neggap.json", `{"duration": 1, "completed": 2, "max_concurrency": 2, "ttfts": [0.1, 0.1], "itls": [[-3], [0.01]]}`, nil, []string{"neggap.json", "gap"}},
		{"start.json", `{"duration": 1, "completed": 2, "max_concurrency": 2, "start_times": [1e300, 5], ` + good + `}`, nil, []string{"start.json", "send time"}},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := os.WriteFile(path, []byte(tt.body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			run, err := Import(context.Background(), []string{path}, Options{})
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("imported (levels %+v), want an error", run.Levels)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(run.Levels[0].Requests); n != 1 {
				t.Errorf("%d requests kept, want 1 (the impossible one excluded)", n)
			}
			warn := strings.Join(run.Warnings, "\n")
			for _, w := range tt.wantWarn {
				if !strings.Contains(warn, w) {
					t.Errorf("warnings %q do not say %q", warn, w)
				}
			}
			for _, r := range run.Levels[0].Requests {
				if r.SentNs < 0 || (r.TTFT != nil && *r.TTFT < 0) || (r.Output != nil && *r.Output > 1<<31-1) {
					t.Errorf("an impossible request was kept: %+v", r)
				}
			}
		})
	}
}
