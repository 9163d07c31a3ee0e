package importer_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/importer/importanalysis"
	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

// peerDir is the shared real result files of vLLM, SGLang, AIPerf and guidellm with the
// tools' own summary numbers (see INDEX.md and other-tools/INDEX.md there). They
// are read in place, never copied.
func peerDir(t testing.TB) string {
	t.Helper()
	return sharedtest.Dir(t, "peer-results")
}

// TestRealFiles imports every file of the shared peer results: each either imports
// into the expected levels and requests, or is refused with the expected reason.
// Where it imports, ceiling's analysis of the rows must reproduce the tool's own
// TTFT numbers (and ITL and TPOT for vLLM) exactly; what may differ is listed.
func TestRealFiles(t *testing.T) {
	other := filepath.Join(peerDir(t), "other-tools")
	sweep := filepath.Join(other, "vllm-sweep", "er0080-opt125m-v0.25.1-sweep")
	cases := []struct {
		name    string
		files   []string
		tool    string
		levels  int
		reqs    int
		refused string // substring of the refusal; "" = imports
		// mayDiffer lists the metrics whose numbers may differ from the tool's
		// (a documented definition difference); every other checked number must match.
		mayDiffer []string
		minChecks int
	}{
		{name: "vllm h100 sweep", files: glob(t, "aurotripathy-*h100*.json"), tool: "vllm", levels: 9, reqs: 900, minChecks: 9 * 12},
		{name: "vllm l40s sweep", files: glob(t, "aurotripathy-*l40s*.json"), tool: "vllm", levels: 8, reqs: 800, minChecks: 8 * 12},
		{name: "vllm append-result ds0822", files: glob(t, "muma378-*0822*.jsonl"), tool: "vllm", levels: 16, reqs: 305, minChecks: 15 * 12},
		{name: "vllm append-result ds0904 (1 output token)", files: glob(t, "muma378-*0904*.jsonl"), tool: "vllm", levels: 16, reqs: 1505, minChecks: 16 * 6},
		{name: "vllm start_times rtx3090", files: glob(t, "maty0609-*.json"), tool: "vllm", levels: 1, reqs: 100,
			mayDiffer: []string{"output_tok_s", "request_s"}, minChecks: 20},
		{name: "aiperf 0.1 with cancellations", files: []string{filepath.Join(other, "aiperf", "ai-dynamo-aiperf-examples-run1-profile_export.jsonl")},
			tool: "aiperf", levels: 1, reqs: 100, mayDiffer: []string{"output_tok_s", "request_s"}, minChecks: 20},
		{name: "aiperf 0.1 records with its summary and csv given too", files: globIn(t, filepath.Join(other, "aiperf"), "ai-dynamo-*"),
			tool: "aiperf", levels: 1, reqs: 100, mayDiffer: []string{"output_tok_s", "request_s"}, minChecks: 20},
		{name: "aiperf 0.8 all timeouts", files: []string{filepath.Join(other, "aiperf", "databloom-qwen35-4b-gguf-llamacpp-c1-ALLERRORS-profile_export.jsonl")},
			tool: "aiperf", levels: 1, reqs: 20},
		{name: "aiperf summary alone", files: []string{filepath.Join(other, "aiperf", "ai-dynamo-aiperf-examples-run1-profile_export_aiperf.json")},
			refused: "profile_export.jsonl"},
		{name: "aiperf csv alone", files: []string{filepath.Join(other, "aiperf", "databloom-qwen35-4b-gguf-llamacpp-c1-ALLERRORS-profile_export_aiperf.csv")},
			refused: "profile_export.jsonl"},
		{name: "guidellm v1 synchronous", files: []string{filepath.Join(other, "guidellm", "danielkorat-gpt-oss-20b-tp4-sync-benchmarks.json")},
			tool: "guidellm", levels: 1, reqs: 30, mayDiffer: []string{"tpot", "itl", "e2e", "ttft:p90", "ttft:p95", "ttft:p99", "output_tok_s", "request_s"}, minChecks: 20},
		{name: "guidellm v2 empty requests", files: []string{filepath.Join(other, "guidellm", "llm-d-benchmark-mockserver-constant-2-4rps-report-v2.json")},
			refused: "requests lists of all 2 benchmarks are empty"},
		{name: "sglang summary only (Infinity)", files: []string{filepath.Join(other, "sglang", "TonyLi15-qwen25-3b-agg-n100-in512-out128-c8.jsonl")},
			refused: "--output-details"},
		{name: "vllm 0.25 summary only", files: []string{filepath.Join(other, "vllm", "er0080-opt125m-v0.25.1-c2-summaryonly.json")},
			refused: "--save-detailed"},
		{name: "vllm llm-d summary only", files: []string{filepath.Join(other, "vllm", "llm-d-llama31-8b-h100-llmd1p1d-summaryonly.json")},
			refused: "--save-detailed"},
		{name: "vllm all failed", files: []string{filepath.Join(other, "vllm", "er0080-opt125m-v0.25.1-all-failed.json")},
			refused: "every request failed (completed 0)"},
		{name: "vllm sweep directory", files: []string{sweep}, refused: "--save-detailed"},
		{name: "vllm sweep summary.json", files: []string{filepath.Join(sweep, "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8", "summary.json")},
			refused: "import the sweep directory"},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, err := importer.Import(ctx, c.files, importer.Options{})
			if c.refused != "" {
				if err == nil {
					t.Fatalf("imported %d levels, want a refusal (%s)", len(run.Levels), c.refused)
				}
				if !strings.Contains(err.Error(), c.refused) {
					t.Fatalf("refused with %q, want it to say %q", err, c.refused)
				}
				if strings.Contains(c.refused, "--") && !errors.Is(err, importer.ErrSummaryOnly) {
					t.Errorf("refusal %q does not wrap ErrSummaryOnly", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.Tool != c.tool || len(run.Levels) != c.levels {
				t.Fatalf("got %s with %d levels, want %s with %d", run.Tool, len(run.Levels), c.tool, c.levels)
			}
			n := 0
			for i, l := range run.Levels {
				n += len(l.Requests)
				if i > 0 && l.Rate == 0 && l.Concurrency < run.Levels[i-1].Concurrency {
					t.Errorf("level %d (c=%d) after c=%d: levels not ordered by concurrency", i, l.Concurrency, run.Levels[i-1].Concurrency)
				}
			}
			if n != c.reqs {
				t.Errorf("%d requests, want %d", n, c.reqs)
			}
			runs, err := importanalysis.Analyze(ctx, run, importer.WriteOptions{}, analyze.Options{TimelineLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := runs[0]
			if len(r.Levels) != c.levels {
				t.Fatalf("analysis has %d levels, want %d", len(r.Levels), c.levels)
			}
			if !strings.Contains(strings.Join(r.Warnings, "\n"), "imported from "+c.tool) {
				t.Errorf("no 'imported from %s' warning in %q", c.tool, r.Warnings)
			}
			if c.minChecks == 0 {
				if r.SourceComparison != nil && r.SourceComparison.Checked > 0 {
					t.Errorf("compared %d numbers, want none", r.SourceComparison.Checked)
				}
				return
			}
			if r.SourceComparison == nil || r.SourceComparison.Checked < c.minChecks {
				t.Fatalf("comparison %+v: want at least %d numbers checked", r.SourceComparison, c.minChecks)
			}
			ttft := 0
			for _, d := range r.SourceComparison.Differences {
				if !allowed(c.mayDiffer, d.Ref) {
					t.Errorf("%s", d)
				}
				if d.Ref.Metric == "ttft" {
					ttft++
				}
			}
			t.Logf("%d of the tool's numbers compared, %d differ (%d TTFT)", r.SourceComparison.Checked, len(r.SourceComparison.Differences), ttft)
		})
	}
}

func allowed(list []string, r importer.Reference) bool {
	for _, m := range list {
		if m == r.Metric || m == r.Metric+":"+r.Stat {
			return true
		}
	}
	return false
}

func glob(t *testing.T, pattern string) []string {
	return globIn(t, peerDir(t), pattern)
}

func globIn(t *testing.T, dir, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files %s in %s: %v", pattern, dir, err)
	}
	return files
}

// TestMixedSweepsStayApart gives the H100 and the L40S vLLM sweeps together (two
// GPUs, two models, two workloads): they must become two runs, each with its own
// levels, never one run of 17 levels with c=1 twice (issue 24 item 5). ceiling
// import, where the user names one output, still makes one run and warns.
func TestMixedSweepsStayApart(t *testing.T) {
	h100, l40s := glob(t, "aurotripathy-*h100*.json"), glob(t, "aurotripathy-*l40s*.json")
	// Interleaved, as a shell glob of both directories might give them.
	var files []string
	for i := range max(len(h100), len(l40s)) {
		if i < len(l40s) {
			files = append(files, l40s[i])
		}
		if i < len(h100) {
			files = append(files, h100[i])
		}
	}
	runs, err := importer.ImportRuns(context.Background(), files, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("got %d runs, want 2 (H100 and L40S apart)", len(runs))
	}
	for i, want := range []struct {
		model  string
		levels int
	}{{"RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8", 8}, {"meta-llama/Llama-3.1-8B-Instruct", 9}} {
		if runs[i].Model != want.model || len(runs[i].Levels) != want.levels {
			t.Errorf("run %d: model %q with %d levels, want %q with %d", i, runs[i].Model, len(runs[i].Levels), want.model, want.levels)
		}
		for _, w := range runs[i].Warnings {
			if strings.Contains(w, "imported as one run") {
				t.Errorf("run %d warns %q", i, w)
			}
		}
	}

	one, err := importer.Import(context.Background(), files, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Levels) != 17 || !strings.Contains(strings.Join(one.Warnings, "\n"), "imported as one run") {
		t.Errorf("Import: %d levels, warnings %q; want 17 and a warning that two models were made one run", len(one.Levels), one.Warnings)
	}
}
