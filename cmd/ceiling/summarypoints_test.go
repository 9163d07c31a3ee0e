package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// An InferenceX point file given beside a measured run is set beside it as
// summary-level points: the point at the run's concurrency is compared with the
// measured level, one at a load the run did not measure says so, and the summary
// file is never analyzed as a run. Importing it as a trace is refused.
func TestAnalyzeWithSummaryPoints(t *testing.T) {
	run := filepath.Join("..", "..", "importer", "testdata", "genai-bench", "regression_main_branch")
	points := filepath.Join(t.TempDir(), "agg.json")
	// genai-bench measured c=1: TTFT p50 0.23779947950060887 s, TPOT p50 0.008174279459604125 s.
	body := `[{"hw": "h100", "tp": 1, "conc": 1, "model": "GLM-4.6", "output_tput_per_gpu": 100, "median_ttft": 0.25, "median_tpot": 0.008, "median_intvty": 125},
	          {"hw": "h100", "tp": 1, "conc": 64, "model": "Qwen/Qwen3-8B", "output_tput_per_gpu": 2000, "median_ttft": 1.5, "median_tpot": 0.03}]`
	if err := os.WriteFile(points, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("analyze", run, points, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 || len(a.SummaryChecks) != 1 {
		t.Fatalf("%d runs, %d summary checks: want the run alone, with the points beside it", len(a.Runs), len(a.SummaryChecks))
	}
	sc := a.SummaryChecks[0]
	if !sc.SummaryLevel || sc.Tool != "inferencex" || len(sc.Points) != 2 {
		t.Fatalf("summary check %+v", sc)
	}
	p, far := sc.Points[0], sc.Points[1]
	// The trace keeps whole nanoseconds: the measured p50 is genai-bench's to 1 µs.
	if p.MeasuredLevel == nil || p.Measured.TTFT == nil || abs(*p.Measured.TTFT-0.23779947950060887) > 1e-6 || p.DiffPct.TTFT == nil {
		t.Fatalf("point at c=1: level %v, measured TTFT %v", p.MeasuredLevel, p.Measured.TTFT)
	}
	if want := (0.25 - *p.Measured.TTFT) / *p.Measured.TTFT * 100; abs(*p.DiffPct.TTFT-want) > 1e-9 {
		t.Errorf("TTFT difference %g%%, want %g%%", *p.DiffPct.TTFT, want)
	}
	// GLM-4.6 is the run's zai-org/GLM-4.6; Qwen3-8B is another model.
	if notes := strings.Join(sc.Notes, "\n"); strings.Contains(notes, `"GLM-4.6"`) || !strings.Contains(notes, `"Qwen/Qwen3-8B", the run "zai-org/GLM-4.6": these are different models`) {
		t.Errorf("model notes: %s", notes)
	}
	if far.MeasuredLevel != nil || far.DiffPct.OutputTokSPerGPU != nil {
		t.Errorf("the c=64 point was compared with a level the run did not measure: %+v", far)
	}
	_, text, _ := runCLI("analyze", run, points)
	if !strings.Contains(text, "SUMMARY-LEVEL points from inferencex") || !strings.Contains(text, "none at this load") {
		t.Errorf("text output lacks the summary-level table:\n%s", text)
	}
	code, _, stderr = runCLI("import", points, "-o", filepath.Join(t.TempDir(), "x.parquet"))
	if code == 0 || !strings.Contains(stderr, "per-configuration summaries") || !strings.Contains(stderr, "--save-detailed") {
		t.Errorf("import of summary points: exit %d, %s", code, stderr)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Issue 31 item 13, through the command: an InferenceX point no measurement can
// have (concurrency 1e15, 1e308 tok/s) is not set beside the run; the note naming
// the file, point and field is in the analysis and in the report.
func TestAnalyzeLeavesOutImpossibleSummaryPoints(t *testing.T) {
	run := filepath.Join("..", "..", "importer", "testdata", "genai-bench", "regression_main_branch")
	dir := t.TempDir()
	points := filepath.Join(dir, "agg.json")
	body := `[{"hw": "h100", "tp": 1, "conc": 1, "output_tput_per_gpu": 100, "median_ttft": 0.25},
	          {"hw": "h100", "tp": 1, "conc": 1e15, "output_tput_per_gpu": 100},
	          {"hw": "h100", "tp": 1, "conc": 1, "output_tput_per_gpu": 1e308}]`
	if err := os.WriteFile(points, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("analyze", run, points, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.SummaryChecks) != 1 || len(a.SummaryChecks[0].Points) != 1 {
		t.Fatalf("summary checks %+v, want the one possible point", a.SummaryChecks)
	}
	notes := strings.Join(a.SummaryChecks[0].Notes, "\n")
	for _, want := range []string{"agg.json element 1 left out: concurrency 1e+15", "agg.json element 2 left out: output tok/s per GPU 1e+308"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	html := filepath.Join(dir, "report.html")
	if code, _, stderr := runCLI("report", run, points, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "agg.json element 1 left out: concurrency 1e+15") {
		t.Error("the report does not say the impossible point was left out")
	}
}

// Issue 28 item 3 in analyze and report: a CSV of published levels is set beside a
// measured run as summary-level points (it was read as a Parquet file and called
// corrupt), the closed-loop points show no request rate, a bad CSV is refused with
// its row named, and given alone it is refused with what to do instead.
func TestAnalyzeWithPublishedLevelsCSV(t *testing.T) {
	run := filepath.Join("..", "..", "samples", "llamacpp-d768-4slots.parquet")
	points := filepath.Join(t.TempDir(), "levels.csv")
	body := "# a comment line, as in samples/published\nconcurrency,output_tok_s_per_gpu,per_user_tok_s,input_tokens,output_tokens,source\n4,80,25,8192,1024,blog\n64,130,16.7,8192,1024,blog\n"
	if err := os.WriteFile(points, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("analyze", run, points, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 || len(a.SummaryChecks) != 1 || len(a.SummaryChecks[0].Points) != 2 {
		t.Fatalf("%d runs, %d summary checks: want the run with the CSV's 2 levels beside it", len(a.Runs), len(a.SummaryChecks))
	}
	// The table names no model, and its lengths (8,192 + 1,024) are not the run's
	// (256 + 128): both are said, not left for the reader to notice.
	notes := strings.Join(a.SummaryChecks[0].Notes, "\n")
	if !strings.Contains(notes, "the points name no model") || !strings.Contains(notes, "8192 prompt + 1024 output tokens, the run's c=4 level with 256 + 128") {
		t.Errorf("notes lack the unnamed model or the other lengths:\n%s", notes)
	}
	p := a.SummaryChecks[0].Points[0]
	if p.MeasuredLevel == nil || p.Measured.OutputTokSPerGPU == nil || p.DiffPct.OutputTokSPerGPU == nil {
		t.Errorf("the c=4 level is not compared with the run's c=4: %+v", p)
	}
	_, text, _ := runCLI("analyze", run, points)
	row := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "levels.csv row 1") {
			row = line
		}
	}
	if row == "" || strings.Contains(text, "(;") || strings.Contains(row, "0.00") {
		t.Errorf("text: want the CSV's rows, no empty version, no rate of 0 for closed-loop points:\n%s", text)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runCLI("report", run, points, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "levels.csv row 2") {
		t.Errorf("the report does not show the CSV's levels (%v)", err)
	}
	code, _, stderr = runCLI("analyze", points)
	if code != exitUsage || !strings.Contains(stderr, "a CSV of published levels") || !strings.Contains(stderr, "ceiling whatif") {
		t.Errorf("the CSV alone: exit %d, %s", code, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("concurrency,output_tok_s_per_gpu\n4,40\n8,-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("analyze", run, bad)
	if code == 0 || !strings.Contains(stderr, "bad.csv") || !strings.Contains(stderr, "row 2") || strings.Contains(stderr, "Parquet") {
		t.Errorf("a bad CSV: exit %d, %s", code, stderr)
	}
}
