package analyze

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/importer"
)

// The aiconfigurator#1396 case: the planner predicted 883.7 output tok/s/GPU at
// concurrency 384 on 8 × B200 (8k/1k); the measured deployment gave 192.4 at 384,
// its KV cache holding far fewer requests of 9,216 tokens than 384.
func TestComparePrediction1396(t *testing.T) {
	level := func(i, c int, tokS, user, ttft, tpot float64) Level {
		return Level{Level: i, Concurrency: c, Valid: true, OutputTokS: tokS, PerUserTokS: user,
			TTFT: Summary{P50: pf(ttft)}, TPOT: Summary{P50: pf(tpot)}, MeanPromptTokens: 8192, MeanOutputTokens: 1024}
	}
	kvTokens := int64(270_000) // ~29 requests of 9,216 tokens
	r := &Run{RunID: "b200-nvfp4", Levels: []Level{
		level(0, 64, 8*120, 30, 2.0, 0.030),
		level(1, 384, 8*192.44, 44.59, 40, 0.022),
	}}
	r.Capacity = &Capacity{KVCapacityTokens: &kvTokens, Source: "measured", MeanRequestTokens: pf(8192 + 1024/2)}
	r.Ceilings.KV = pf(float64(kvTokens) / (8192 + 1024/2))
	r.Ceiling = Ceiling{Concurrency: pf(31), Binding: "kv"}
	p, err := importer.ReadPrediction("../importer/testdata/planner/aiconfigurator-1396-best_config_topn.csv")
	if err != nil {
		t.Fatal(err)
	}
	pc := ComparePrediction(r, Options{BudgetInput: capacity.BudgetInput{GPUs: 8, TP: 8}}, p)
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
	writePredictions(&b, &Analysis{Predictions: []PredictionCheck{*pc}}, false)
	for _, s := range []string{"PREDICTED by AIConfigurator (vllm) beside measured run b200-nvfp4", "+359%", "FLAG: " + want} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
}

// Below the KV cache and the ceiling nothing is flagged, and a point outside the
// sweep has no measured figures rather than an extrapolated one.
func TestComparePredictionWithinLimits(t *testing.T) {
	r := &Run{RunID: "m", Levels: []Level{
		{Level: 0, Concurrency: 1, Valid: true, OutputTokS: 100, PerUserTokS: 100},
		{Level: 1, Concurrency: 8, Valid: true, OutputTokS: 600, PerUserTokS: 75},
		{Level: 2, Concurrency: 16, Valid: false, OutputTokS: 9000, PerUserTokS: 1},
	}}
	r.Ceiling = Ceiling{Concurrency: pf(64), Binding: "knee"}
	p := &importer.Prediction{Tool: importer.FromPlanner, Planner: "x", Points: []importer.PredictedPoint{
		{Label: "a", Concurrency: 4, OutputTokSPerGPU: 400},
		{Label: "b", Concurrency: 16, OutputTokSPerGPU: 900},
	}}
	pc := ComparePrediction(r, Options{BudgetInput: capacity.BudgetInput{GPUs: 1}}, p)
	if len(pc.Flags) != 0 {
		t.Errorf("flags %q; want none", pc.Flags)
	}
	a := pc.Points[0]
	// Interpolated: 100 + 3/7 × 500 = 314.3; error (400 − 314.3) ÷ 314.3 = +27%.
	if a.Measured.OutputTokSPerGPU == nil || *a.Measured.OutputTokSPerGPU < 314 || *a.Measured.OutputTokSPerGPU > 314.5 {
		t.Errorf("measured at c=4: %v", a.Measured.OutputTokSPerGPU)
	}
	if b := pc.Points[1]; b.Measured.OutputTokSPerGPU != nil || !strings.Contains(b.MeasuredAt, "sweep covers c=1 to 8") {
		t.Errorf("c=16 (an invalid level only): %+v", b)
	}
	if len(pc.Notes) == 0 || !strings.Contains(pc.Notes[len(pc.Notes)-1], "KV capacity is unknown") {
		t.Errorf("notes %q; want the unknown KV capacity said", pc.Notes)
	}
}
