package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// TestWhatIfFromPublishedLevels (issue 28, item 3): a CSV of one deployment's
// published levels (Kimi-K2.5 INT4 on 8 × H200, InferenceX's blog) and the same
// levels in InferenceX's own JSON are the measured baseline of a what-if to
// another GPU: every level is predicted at its concurrency, the output says it was
// built from summary points, and the two formats agree. The B200 prediction is
// logged against the published B200 levels of the same deployment.
func TestWhatIfFromPublishedLevels(t *testing.T) {
	deployment := []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "h200", "--gpus", "8", "--tp", "8", "--weight-dtype", "int4", "--to-gpu", "b200"}
	// Published B200 output tok/s of the whole deployment: total per GPU × 8 × 1024/9216.
	b200 := map[float64]float64{4: 447 * 8.0 / 9, 8: 693 * 8.0 / 9, 16: 969 * 8.0 / 9, 32: 1351 * 8.0 / 9, 64: 1791 * 8.0 / 9}
	var got [][]analyze.LevelPrediction
	for _, file := range []string{"kimi-k2.5-int4-8xh200-tp8.csv", "kimi-k2.5-int4-8xh200-tp8-inferencex.json"} {
		path := filepath.Join("..", "..", "samples", "published", file)
		code, stdout, stderr := runCLI(append([]string{"whatif", path, "--format", "json"}, deployment...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		var doc analyze.WhatIfDoc
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		res := doc.WhatIf[0]
		if res.SummaryPoints == nil || res.SummaryPoints.Points != 5 || !strings.Contains(res.Notes[0], "built from summary points") {
			t.Fatalf("%s: not marked built from summary points: %+v, notes %q", file, res.SummaryPoints, res.Notes)
		}
		if res.Rows[0].Scenario != "published" || res.Rows[0].KVCapacityTokens <= 0 {
			t.Errorf("%s: the published row %+v", file, res.Rows[0])
		}
		if len(res.Levels) != 5 {
			t.Fatalf("%s: %d levels predicted, want 5", file, len(res.Levels))
		}
		for _, l := range res.Levels {
			if l.OutputTokS == nil || l.OutputTokS.Value <= l.Measured.OutputTokS {
				t.Errorf("%s c=%g: predicted %+v for a faster GPU than the measured %g", file, l.Concurrency, l.OutputTokS, l.Measured.OutputTokS)
				continue
			}
			if want := l.Measured.OutputTokS; want < 8*42 || want > 8*131 {
				t.Errorf("%s c=%g: measured %g tok/s, not the per-GPU figure × 8 GPUs", file, l.Concurrency, want)
			}
			t.Logf("%s c=%g: H200 published %.0f, B200 predicted %.0f [%.0f–%.0f], published %.0f (%+.0f%%)", file, l.Concurrency,
				l.Measured.OutputTokS, l.OutputTokS.Value, l.OutputTokS.Low, l.OutputTokS.High, b200[l.Concurrency], 100*(l.OutputTokS.Value/b200[l.Concurrency]-1))
		}
		got = append(got, res.Levels)
		text := ceiling(t, append([]string{"whatif", path}, deployment...)...)
		if !strings.Contains(text, "note: built from summary points: 5 published levels") {
			t.Errorf("%s: the text does not say it was built from summary points:\n%s", file, text)
		}
	}
	for i := range got[0] {
		if a, b := got[0][i].OutputTokS.Value, got[1][i].OutputTokS.Value; a != b {
			t.Errorf("level %d: the CSV predicts %g, the InferenceX JSON %g", i, a, b)
		}
	}
}

// A file of points from several configurations, a bad CSV, or points measured on
// another GPU, GPU count or weight precision than the flags give are refused with the file named; --analysis needs a
// recorded run.
func TestWhatIfFromPublishedLevelsErrors(t *testing.T) {
	dir := t.TempDir()
	mixed := filepath.Join(dir, "agg.json")
	body := `[{"hw": "h200", "tp": 8, "conc": 4, "model": "m", "precision": "fp8", "output_tput_per_gpu": 40},
	          {"hw": "b200", "tp": 8, "conc": 4, "model": "m", "precision": "fp8", "output_tput_per_gpu": 60}]`
	if err := os.WriteFile(mixed, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "levels.csv")
	if err := os.WriteFile(bad, []byte("concurrency,output_tok_s_per_gpu\n4,40\n8,-3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deployment := []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "h200", "--gpus", "8", "--weight-dtype", "int4", "--to-gpu", "b200"}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{mixed}, exitFailed, "agg.json holds 2 configurations (model m, gpu b200, precision fp8, 8 GPUs; model m, gpu h200"},
		{[]string{bad}, exitFailed, "levels.csv row 2, column output_tok_s_per_gpu: -3 is negative"},
		{[]string{filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8.csv"), "--analysis"}, exitUsage, "--analysis needs a recorded run"},
		// Points that name their GPU are not scaled from another's roofline.
		{[]string{filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8-inferencex.json"), "--gpu", "mi300x"}, exitFailed,
			`measured on GPU "h200", not on the deployment's GPU "mi300x" (--gpu)`},
		{[]string{filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8-inferencex.json"), "--tp", "4", "--gpus", "4"}, exitFailed,
			"measured on 8 GPUs, the deployment given has 4 per engine (--tp × --dp × --pp)"},
		{[]string{filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8-inferencex.json"), "--weight-dtype", "fp8"}, exitFailed,
			"measured with int4 weights, not the deployment's fp8 (--weight-dtype)"},
	} {
		code, _, stderr := runCLI(append(append([]string{"whatif"}, deployment...), tt.args...)...) // a flag in args overrides the deployment's
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("whatif %v: exit %d, want %d with %q: %s", tt.args, code, tt.code, tt.want, stderr)
		}
	}
}

// InferenceX's agg_*.json (utils/process_result.py) has no isl/osl: the levels are
// predicted once --points-input-tokens and --points-output-tokens give them, and
// without them the output says which flags to give. The flags are refused with a
// recorded run, whose lengths are measured, and where the file's differ.
func TestWhatIfPublishedLevelsLengths(t *testing.T) {
	var pts []map[string]any
	data, err := os.ReadFile(filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8-inferencex.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &pts); err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		delete(p, "isl")
		delete(p, "osl")
	}
	agg := filepath.Join(t.TempDir(), "agg_kimi.json")
	data, _ = json.Marshal(pts)
	if err := os.WriteFile(agg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	deployment := []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "h200", "--gpus", "8", "--tp", "8", "--weight-dtype", "int4", "--to-gpu", "b200"}
	if out := ceiling(t, append([]string{"whatif", agg}, deployment...)...); !strings.Contains(out, "gives no request lengths: give them with --points-input-tokens and --points-output-tokens") {
		t.Errorf("no hint at the lengths:\n%s", out)
	}
	var doc analyze.WhatIfDoc
	out := ceiling(t, append([]string{"whatif", agg, "--points-input-tokens", "8192", "--points-output-tokens", "1024", "--format", "json"}, deployment...)...)
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if n := len(doc.WhatIf[0].Levels); n != 5 {
		t.Errorf("%d levels predicted with the lengths given, want 5", n)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"../../samples/llamacpp-d768-4slots.parquet", "--points-input-tokens", "100"}, "describe published levels"},
		{[]string{filepath.Join("..", "..", "samples", "published", "kimi-k2.5-int4-8xh200-tp8.csv"), "--points-input-tokens", "1000"}, "--points-input-tokens 1000: kimi-k2.5-int4-8xh200-tp8.csv row 1 gives 8192"},
		{[]string{agg, "--points-output-tokens", "0"}, "--points-output-tokens must be from 1"},
	} {
		code, _, stderr := runCLI(append(append([]string{"whatif"}, tt.args...), deployment...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("whatif %v: exit %d, want a usage error with %q: %s", tt.args, code, tt.want, stderr)
		}
	}
}
