package analyze

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
)

// TestConfigParsedOncePerAnalysis: the declared deployment (config, budget, KV
// model, roofline) is computed once and every run and the what-if take it. The
// config is copied, the deployment prepared, then the copy is deleted: any second
// read of config.json in the analysis of two traces or in the what-if fails. The
// figures must equal those of an analysis that reads the config itself.
func TestConfigParsedOncePerAnalysis(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../samples/models/llama-3.1-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := knownProcess{workers: 4, perWorker: 10, tokens: 8}
	a1 := writeTrace(t, dir, "a.parquet", knownProcessInfo(p.workers), p.rows(1))
	a2 := writeTrace(t, dir, "b.parquet", knownProcessInfo(p.workers), p.rows(2))
	opt := Options{ModelConfig: cfg, BudgetInput: capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1}, TimelineLevel: -1, Resamples: -1}

	fresh, err := Analyze(context.Background(), []string{a1, a2}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := opt.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	once, err := Analyze(context.Background(), []string{a1, a2}, opt)
	if err != nil {
		t.Fatalf("the analysis read config.json again: %v", err)
	}
	if len(once.Runs) != 2 || once.Runs[0].Capacity == nil || once.Runs[0].Decision == nil || once.Runs[0].Decision.Roofline == nil {
		t.Fatalf("analysis without capacity or roofline: %+v", once.Runs)
	}
	want, _ := json.Marshal(fresh)
	got, _ := json.Marshal(once)
	if string(want) != string(got) {
		t.Errorf("analysis with the prepared deployment differs from one that reads the config")
	}
	if _, err := WhatIf(&once.Runs[0], opt, WhatIfChange{KVDtype: "fp8"}); err != nil {
		t.Errorf("the what-if read config.json again: %v", err)
	}
}
