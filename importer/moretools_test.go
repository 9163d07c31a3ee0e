package importer_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/importer/importanalysis"
)

// TestMoreTools imports the files kept under testdata/ for llmperf, genai-bench and
// inference-perf (see testdata/README.md for where each comes from): each imports
// into the expected levels, or is refused with the expected reason, and where it
// imports ceiling's analysis must reproduce every one of the tool's own numbers
// except those with a documented definition difference (mayDiffer).
func TestMoreTools(t *testing.T) {
	td := "testdata"
	llm := filepath.Join(td, "llmperf", "vllm-yi-34b-c1")
	individual := filepath.Join(llm, "01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json")
	genai := filepath.Join(td, "genai-bench", "regression_main_branch")
	ip := filepath.Join(td, "inference-perf", "schema-built")
	cases := []struct {
		name      string
		files     []string
		tool      string
		levels    int
		reqs      int
		errs      int
		conc      []int     // per level; nil = not checked
		rates     []float64 // per level; nil = not checked
		refused   string
		summary   bool // the refusal wraps ErrSummaryOnly
		mayDiffer []string
		minChecks int
	}{
		{name: "llmperf individual responses (real, vLLM, c=1)", files: []string{individual},
			tool: "llmperf", levels: 1, reqs: 80, conc: []int{1}, minChecks: 12},
		{name: "llmperf both files given", files: []string{individual, filepath.Join(llm, "01-ai-Yi-1-5-34B-Chat_550_150_summary.json")},
			tool: "llmperf", levels: 1, reqs: 80, minChecks: 12},
		{name: "llmperf summary alone (real)", files: []string{filepath.Join(llm, "01-ai-Yi-1-5-34B-Chat_550_150_summary.json")},
			refused: "individual_responses.json", summary: true},
		{name: "genai-bench experiment folder (real)", files: []string{genai},
			tool: "genai-bench", levels: 1, reqs: 10, conc: []int{1}, minChecks: 18},
		{name: "genai-bench scenario file (real)", files: []string{filepath.Join(genai, "D100_100_text-to-text_num_concurrency_1_time_120s.json")},
			tool: "genai-bench", levels: 1, reqs: 10, minChecks: 18},
		{name: "genai-bench metadata alone (real)", files: []string{filepath.Join(genai, "experiment_metadata.json")},
			refused: "scenario files", summary: true},
		{name: "inference-perf results directory (built from the schema)", files: []string{ip},
			tool: "inference-perf", levels: 2, reqs: 14, errs: 1, rates: []float64{2, 4},
			mayDiffer: []string{"tpot", "itl", "output_tok_s", "request_s"}, minChecks: 30},
		{name: "inference-perf per-request file", files: []string{filepath.Join(ip, "per_request_lifecycle_metrics.json")},
			tool: "inference-perf", levels: 2, reqs: 14, errs: 1,
			mayDiffer: []string{"tpot", "itl", "output_tok_s", "request_s"}, minChecks: 30},
		{name: "inference-perf stage summary alone (real, kubecon demo)", files: []string{filepath.Join(td, "inference-perf", "kubecon-llama31-8b-summary-only", "stage_3_lifecycle_metrics.json")},
			refused: "report.request_lifecycle.per_request: true", summary: true},
		{name: "llm-d benchmark report v0.2 (real converter output)", files: []string{filepath.Join(td, "llm-d", "vllm_benchmark.v0_2.yaml")},
			refused: "--save-detailed", summary: true},
		{name: "InferenceX points (built from the schema)", files: []string{filepath.Join(td, "inferencex", "agg_points.json")},
			refused: "per-configuration summaries (2 points)", summary: true},
		{name: "InferenceX published points (real, GLM-4.7 on Gaudi3)", files: []string{filepath.Join(td, "inferencex", "supplemental-bmk-glm47-gaudi3-excerpt.json")},
			refused: "per-configuration summaries (4 points)", summary: true},
		{name: "the vLLM summary an InferenceX point was made from (real)", files: []string{filepath.Join(td, "inferencex", "glm47_conc8.json")},
			refused: "--save-detailed", summary: true},
		{name: "inference-perf directory without per-request records (real)", files: []string{filepath.Join(td, "inference-perf", "kubecon-llama31-8b-summary-only")},
			refused: "report.request_lifecycle.per_request: true", summary: true},
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
				if errors.Is(err, importer.ErrSummaryOnly) != c.summary {
					t.Errorf("refusal %q: wraps ErrSummaryOnly = %v, want %v", err, !c.summary, c.summary)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.Tool != c.tool || len(run.Levels) != c.levels {
				t.Fatalf("got %s with %d levels, want %s with %d", run.Tool, len(run.Levels), c.tool, c.levels)
			}
			n, errs := 0, 0
			for i, l := range run.Levels {
				n += len(l.Requests)
				for _, r := range l.Requests {
					if r.Err != "" {
						errs++
					}
				}
				if c.conc != nil && l.Concurrency != c.conc[i] {
					t.Errorf("level %d at concurrency %d, want %d", i, l.Concurrency, c.conc[i])
				}
				if c.rates != nil && l.Rate != c.rates[i] {
					t.Errorf("level %d at rate %g, want %g (open loop)", i, l.Rate, c.rates[i])
				}
			}
			if n != c.reqs || errs != c.errs {
				t.Errorf("%d requests (%d failed), want %d (%d failed)", n, errs, c.reqs, c.errs)
			}
			runs, err := importanalysis.Analyze(ctx, run, importer.WriteOptions{}, analyze.Options{TimelineLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := runs[0]
			if len(r.Levels) != c.levels {
				t.Fatalf("analysis has %d levels, want %d", len(r.Levels), c.levels)
			}
			if r.SourceComparison == nil || r.SourceComparison.Checked < c.minChecks {
				t.Fatalf("comparison %+v: want at least %d numbers checked", r.SourceComparison, c.minChecks)
			}
			for _, d := range r.SourceComparison.Differences {
				if !allowed(c.mayDiffer, d.Ref) {
					t.Errorf("%s", d)
				} else if d.Note == "" {
					t.Errorf("%s: an allowed difference without the definition that explains it", d)
				}
			}
			t.Logf("%d of the tool's numbers compared, %d differ", r.SourceComparison.Checked, len(r.SourceComparison.Differences))
		})
	}
}

// TestSummaryPoints reads the summary-level files into points marked so, every
// number in ceiling's units (seconds, tokens per second) as the file states it.
func TestSummaryPoints(t *testing.T) {
	llmd, err := importer.ReadSummary(filepath.Join("testdata", "llm-d", "vllm_benchmark.v0_2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !llmd.SummaryLevel || llmd.Tool != "llm-d" || len(llmd.Points) != 1 || llmd.Version != "harness vllm-benchmark" {
		t.Fatalf("llm-d summary %+v", llmd)
	}
	p := llmd.Points[0]
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"ttft mean", p.TTFT.Mean, 0.0538569}, {"ttft p50", p.TTFT.P50, 0.0508835}, {"ttft p99", p.TTFT.P99, 0.1147431},
		{"tpot mean", p.TPOT.Mean, 0.0134707}, {"e2e mean", p.E2E.Mean, 13.8344001},
		{"output tok/s", p.OutputTokS, 5197.9355}, {"req/s", p.RequestS, 5.0761}, {"per-user tok/s", p.PerUserTokS, 1 / 0.0134707},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("llm-d %s = %v, want %g", c.name, c.got, c.want)
		}
	}
	if p.Concurrency != 512 || p.Rate != 0 || p.Requests != 200 || p.Failures != 2 || p.OutputTokSPerGPU != nil {
		t.Errorf("llm-d point %+v: want concurrency 512, 200 requests, 2 failures, no per-GPU figure (no GPUs in the report)", p)
	}

	ix, err := importer.ReadSummary(filepath.Join("testdata", "inferencex", "agg_points.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !ix.SummaryLevel || ix.Tool != "inferencex" || len(ix.Points) != 2 {
		t.Fatalf("InferenceX summary %+v", ix)
	}
	a, b := ix.Points[0], ix.Points[1]
	if a.GPU != "b200" || a.GPUs != 4 || a.Concurrency != 32 || *a.OutputTokSPerGPU != 890.12 || math.Abs(*a.OutputTokS-4*890.12) > 1e-9 ||
		*a.TTFT.P50 != 0.456 || *a.TPOT.Mean != 0.0125 || *a.PerUserTokS != 83.33333333333333 || *a.E2E.P50 != 1.234 {
		t.Errorf("InferenceX agg point %+v", a)
	}
	if b.GPU != "h200" || b.GPUs != 4 || b.Concurrency != 64 || *b.OutputTokSPerGPU != 1390.7 || *b.TTFT.Mean != 0.094 || b.PerUserTokS != nil {
		t.Errorf("InferenceX dashboard point %+v", b)
	}
	if _, err := importer.ReadSummary(filepath.Join("testdata", "genai-bench", "regression_main_branch")); err == nil || !strings.Contains(err.Error(), "import it") {
		t.Errorf("a per-request result read as a summary: %v", err)
	}
}

// The real InferenceX points read as summary-level points, and the c=8 point is its
// raw vLLM summary divided as InferenceX's process_result.py divides it: output
// throughput over tp, latencies from ms to s (the points are rounded to 2 and 5
// decimals).
func TestInferenceXRealPoints(t *testing.T) {
	s, err := importer.ReadSummary(filepath.Join("testdata", "inferencex", "supplemental-bmk-glm47-gaudi3-excerpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 4 {
		t.Fatalf("%d points, want 4", len(s.Points))
	}
	p := s.Points[3]
	if p.GPU != "gaudi3" || p.GPUs != 8 || p.Concurrency != 8 || p.Model != "zai-org/GLM-4.7" {
		t.Fatalf("point %+v", p)
	}
	// glm47_conc8.json: output_throughput 126.43239862459474 tok/s, median_ttft_ms
	// 327.1921199921053, median_tpot_ms 60.269884787879306, p99_ttft_ms 868.7727725924924.
	checks := []struct {
		name      string
		got       *float64
		want, tol float64
	}{
		{"output tok/s/GPU", p.OutputTokSPerGPU, 126.43239862459474 / 8, 0.005},
		{"output tok/s", p.OutputTokS, 126.43239862459474, 8 * 0.005},
		{"median TTFT", p.TTFT.P50, 0.3271921199921053, 5e-6},
		{"p99 TTFT", p.TTFT.P99, 0.8687727725924924, 5e-6},
		{"median TPOT", p.TPOT.P50, 0.060269884787879306, 5e-6},
		{"per-user tok/s (median_intvty)", p.PerUserTokS, 1000 / 60.269884787879306, 0.005},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > c.tol {
			t.Errorf("%s = %v, want %g ± %g", c.name, c.got, c.want, c.tol)
		}
	}
}
