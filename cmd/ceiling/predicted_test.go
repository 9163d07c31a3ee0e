package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

const aicFile = "../../importer/testdata/planner/aiconfigurator-1396-best_config_topn.csv"

// An AIConfigurator file imports as a PREDICTED run (planner JSON, never a trace)
// and shows beside a measured run, given by --predicted or as a run, with per-point
// errors and the KV flag.
func TestPredictedBesideMeasured(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(files) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(files), err)
	}
	dir := t.TempDir()
	pred := filepath.Join(dir, "aic.json")
	if code, _, stderr := runCLI("import", aicFile, "-o", pred); code != exitOK || !strings.Contains(stderr, "3 PREDICTED points") {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI("import", aicFile, "-o", filepath.Join(dir, "aic.parquet")); code != exitUsage || !strings.Contains(stderr, "predictions, not measured requests") {
		t.Errorf("import to .parquet: exit %d\n%s", code, stderr)
	}
	flags := []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm", "--gpus", "1"}
	for _, how := range [][]string{{"--predicted", pred}, {aicFile}} {
		args := append(append(append([]string{"analyze"}, files...), how...), flags...)
		out := ceiling(t, args...)
		for _, want := range []string{"PREDICTED by AIConfigurator (vllm) beside measured run", "PREDICTED tok/s/GPU",
			"FLAG: predicted c=384 at 884 tok/s/GPU", "the KV cache holds ~"} {
			if !strings.Contains(out, want) {
				t.Errorf("analyze %v: lacks %q:\n%s", how, want, out[:min(len(out), 3000)])
			}
		}
		js := ceiling(t, append(args, "--format", "json")...)
		var a analyze.Analysis
		if err := json.Unmarshal([]byte(js), &a); err != nil {
			t.Fatal(err)
		}
		if len(a.Runs) != 1 || len(a.Predictions) != 1 || !a.Predictions[0].Predicted || len(a.Predictions[0].Points) != 3 {
			t.Fatalf("runs %d predictions %+v", len(a.Runs), a.Predictions)
		}
	}
}

func TestPredictedMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pareto.csv")
	if err := os.WriteFile(path, []byte("model,concurrency,tokens/s/gpu\nm,x,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("analyze", "--predicted", path, "some.parquet")
	if code != exitFailed || !strings.Contains(stderr, path) || !strings.Contains(stderr, `concurrency "x" is not a number`) {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI("analyze", aicFile)
	if code != exitUsage || !strings.Contains(stderr, "no measured run given") {
		t.Errorf("a prediction alone: exit %d\n%s", code, stderr)
	}
}

// The report draws the predicted points over the measured curves, with the
// per-point errors and the flags in words, and compares the runs at the same
// per-user speed.
func TestReportPredicted(t *testing.T) {
	h100, _ := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	l40s, _ := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*l40s*.json"))
	if len(h100) != 9 || len(l40s) != 8 {
		t.Fatalf("want the H100 and L40S sweeps, got %d and %d files", len(h100), len(l40s))
	}
	dir := t.TempDir()
	runs := []string{filepath.Join(dir, "h100.parquet"), filepath.Join(dir, "l40s.parquet")}
	ceiling(t, append(append([]string{"import"}, h100...), "-o", runs[0])...)
	ceiling(t, append(append([]string{"import"}, l40s...), "-o", runs[1])...)
	out := filepath.Join(dir, "r.html")
	ceiling(t, "report", runs[0], runs[1], "--predicted", aicFile, "--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm", "--gpus", "1", "--gpu-hour-cost", "2.5", "-o", out)
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PREDICTED by AIConfigurator (vllm) beside the measured runs", "PREDICTED over measured: tokens per GPU vs per-user speed",
		"FLAG: predicted c=384 at 884 tok/s/GPU", "At the same per-user speed", "per million output tokens", "tok/s per user:"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// analyze of the two runs gives the same comparison in text.
	text := ceiling(t, "analyze", runs[0], runs[1], "--gpus", "1", "--gpu-hour-cost", "2.5")
	if !strings.Contains(text, "At the same per-user speed") || !strings.Contains(text, "($") {
		t.Errorf("analyze of two runs lacks the comparison at the same per-user speed:\n%s", text[:min(len(text), 2000)])
	}
}

// TestPredictedOtherDeploymentWarns (issue 28, item 6): a Kimi-K2.5 NVFP4 8 × B200
// planner file beside a Llama-3.1-8B run on one H100, given no --gpus, was
// compared silently and divided the run by the planner's 8 GPUs. Now the warning
// names both models and both GPUs (beside the table and in the run's warnings),
// and the run's per-GPU figures are never the planner's GPU count's. A planner
// file of the same deployment draws no warning.
func TestPredictedOtherDeploymentWarns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(peerDir(t), "aurotripathy-*h100*.json"))
	if err != nil || len(files) != 9 {
		t.Fatalf("want the 9 H100 files, got %d (%v)", len(files), err)
	}
	flags := []string{"--model-config", "../../samples/models/llama-3.1-8b.json", "--gpu", "h100-sxm"}
	args := append(append(append([]string{"analyze"}, files...), "--predicted", aicFile), flags...)
	var a analyze.Analysis
	if err := json.Unmarshal([]byte(ceiling(t, append(args, "--format", "json")...)), &a); err != nil {
		t.Fatal(err)
	}
	pc := a.Predictions[0]
	for _, want := range []string{`model "nvidia/Kimi-K2.5-NVFP4", the run's "meta-llama/Llama-3.1-8B-Instruct"`, `GPU "b200_sxm", the run's "h100-sxm"`} {
		if !strings.Contains(pc.Mismatch, want) {
			t.Errorf("mismatch %q lacks %q", pc.Mismatch, want)
		}
	}
	if pc.MeasuredGPUs != 1 {
		t.Errorf("the run divided by %d GPUs (%s): the planner's count is another deployment's", pc.MeasuredGPUs, pc.GPUsBasis)
	}
	if w := strings.Join(a.Runs[0].Warnings, "\n"); !strings.Contains(w, "--predicted "+aicFile) || !strings.Contains(w, "the planner predicted another deployment") {
		t.Errorf("run warnings lack the mismatch:\n%s", w)
	}
	if text := ceiling(t, args...); !strings.Contains(text, "note: WARNING: the planner predicted another deployment") {
		t.Errorf("text lacks the warning beside the table:\n%s", text)
	}

	same := filepath.Join(t.TempDir(), "same.json")
	body := `{"ceiling_prediction": 1, "planner": "p", "model": "Llama-3.1-8B-Instruct", "gpu": "h100", "gpus": 1,
	 "prompt_tokens": 950, "output_tokens": 512, "points": [{"concurrency": 16, "output_tok_s_per_gpu": 1000}]}`
	if err := os.WriteFile(same, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	a = analyze.Analysis{}
	if err := json.Unmarshal([]byte(ceiling(t, append(append(append([]string{"analyze"}, files...), "--predicted", same, "--format", "json"), flags...)...)), &a); err != nil {
		t.Fatal(err)
	}
	if pc := a.Predictions[0]; pc.Mismatch != "" || strings.Contains(strings.Join(a.Runs[0].Warnings, "\n"), "another deployment") {
		t.Errorf("the same deployment drew a mismatch %q", pc.Mismatch)
	}
}
