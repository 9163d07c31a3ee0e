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
