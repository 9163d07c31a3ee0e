package importer_test

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/analyze/analysistext"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/importer"
)

// pf is a pointer to v.
func pf(v float64) *float64 { return &v }

// The aiconfigurator#1396 case: the planner predicted 883.7 output tok/s/GPU at
// concurrency 384 on 8 × B200 (8k/1k); the measured deployment gave 192.4 at 384,
// its KV cache holding far fewer requests of 9,216 tokens than 384.
func TestComparePrediction1396(t *testing.T) {
	level := func(i, c int, tokS, user, ttft, tpot float64) analyze.Level {
		return analyze.Level{Level: i, Concurrency: c, Valid: true, OutputTokS: tokS, PerUserTokS: user,
			TTFT: analyze.Summary{P50: pf(ttft)}, TPOT: analyze.Summary{P50: pf(tpot)}, MeanPromptTokens: 8192, MeanOutputTokens: 1024}
	}
	kvTokens := int64(270_000) // ~29 requests of 9,216 tokens
	r := &analyze.Run{RunID: "b200-nvfp4", Levels: []analyze.Level{
		level(0, 64, 8*120, 30, 2.0, 0.030),
		level(1, 384, 8*192.44, 44.59, 40, 0.022),
	}}
	r.Capacity = &analyze.Capacity{KVCapacityTokens: &kvTokens, Source: "declared", MeanRequestTokens: pf(8192 + 1024/2)}
	r.Ceilings.KV = pf(float64(kvTokens) / (8192 + 1024/2))
	r.Ceiling = analyze.Ceiling{Concurrency: pf(31), Binding: "kv"}
	p, err := importer.ReadPrediction("testdata/planner/aiconfigurator-1396-best_config_topn.csv")
	if err != nil {
		t.Fatal(err)
	}
	pc := analyze.ComparePrediction(r, analyze.Options{BudgetInput: capacity.BudgetInput{GPUs: 8, TP: 8}}, p)
	if !pc.Predicted || pc.MeasuredGPUs != 8 || len(pc.Points) != 3 {
		t.Fatalf("check %+v", pc)
	}
	top := pc.Points[2]
	if top.Concurrency != 384 || top.Measured.OutputTokSPerGPU == nil || *top.Measured.OutputTokSPerGPU != 192.44 {
		t.Fatalf("point at 384: %+v", top)
	}
	// (883.70 − 192.44) ÷ 192.44 = +359%; per user (21.87 − 44.59) ÷ 44.59 = −51%.
	if e := *top.ErrPct.OutputTokSPerGPU; e < 359 || e > 360 {
		t.Errorf("tok/s/GPU error %.1f%%; want +359%%", e)
	}
	if e := *top.ErrPct.PerUserTokS; e < -51.1 || e > -50.9 {
		t.Errorf("per-user error %.1f%%; want −51%%", e)
	}
	if !top.BeyondKV || top.KVHolds == nil || *top.KVHolds > 30 || *top.KVHolds < 29 {
		t.Errorf("KV holds %v beyond %v; want ~29 and flagged", top.KVHolds, top.BeyondKV)
	}
	// The 216 points lie between the measured levels: interpolated, also beyond the KV cache.
	if mid := pc.Points[0]; !strings.HasPrefix(mid.MeasuredAt, "interpolated between c=64 and c=384") || !mid.BeyondKV {
		t.Errorf("point at 216: %+v", mid)
	}
	want := "predicted c=384 at 884 tok/s/GPU (aiconfigurator-1396-best_config_topn.csv row 1): the KV cache holds ~29 requests of 8192+1024 tokens (declared by the server); measured 192 tok/s/GPU at 384"
	found := false
	for _, f := range pc.Flags {
		found = found || f == want
	}
	if !found || len(pc.Flags) != 3 {
		t.Errorf("flags %q\nwant 3, among them %q", pc.Flags, want)
	}
	var b strings.Builder
	if err := analysistext.Write(&b, &analyze.Analysis{Runs: []analyze.Run{}, Predictions: []analyze.PredictionCheck{*pc}}, analysistext.FormatText); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PREDICTED by AIConfigurator (vllm) beside measured run b200-nvfp4", "+359%", "FLAG: " + want} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
}

// TestComparePredictionKVSource: the flag names where the KV figure came from, by
// the capacity's source as analyze sets it ("declared" or "modelled"). The check
// read a source word ("measured") analyze no longer writes, so a capacity the
// server declared was called modelled.
func TestComparePredictionKVSource(t *testing.T) {
	p, err := importer.ReadPrediction("testdata/planner/aiconfigurator-1396-best_config_topn.csv")
	if err != nil {
		t.Fatal(err)
	}
	kvTokens := int64(270_000)
	for _, tc := range []struct{ source, want string }{
		{"declared", "(declared by the server)"},
		{"modelled", "(modelled)"},
	} {
		r := &analyze.Run{RunID: "b200", Levels: []analyze.Level{{Level: 0, Concurrency: 384, Valid: true, OutputTokS: 8 * 192.44,
			PerUserTokS: 44.59, MeanPromptTokens: 8192, MeanOutputTokens: 1024}}}
		r.Capacity = &analyze.Capacity{KVCapacityTokens: &kvTokens, Source: tc.source, MeanRequestTokens: pf(8192 + 1024/2)}
		r.Ceilings.KV = pf(float64(kvTokens) / (8192 + 1024/2))
		r.Ceiling = analyze.Ceiling{Concurrency: pf(29), Binding: "kv"}
		pc := analyze.ComparePrediction(r, analyze.Options{BudgetInput: capacity.BudgetInput{GPUs: 8, TP: 8}}, p)
		if got := strings.Join(pc.Flags, "\n"); !strings.Contains(got, tc.want) {
			t.Errorf("capacity source %s: flags %q lack %q", tc.source, pc.Flags, tc.want)
		}
	}
}
