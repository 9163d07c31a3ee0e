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
	needPeers(t)
	files, err := filepath.Glob(filepath.Join(peerDir, "aurotripathy-*h100*.json"))
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
