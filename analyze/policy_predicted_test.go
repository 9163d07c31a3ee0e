package analyze

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// Below the KV cache and the ceiling nothing is flagged, and a point outside the
// sweep has no measured figures rather than an extrapolated one.
func TestComparePredictionWithinLimits(t *testing.T) {
	r := &Run{RunID: "m", Levels: []Level{
		{Level: 0, Concurrency: 1, Valid: true, OutputTokS: 100, PerUserTokS: 100},
		{Level: 1, Concurrency: 8, Valid: true, OutputTokS: 600, PerUserTokS: 75},
		{Level: 2, Concurrency: 16, Valid: false, OutputTokS: 9000, PerUserTokS: 1},
	}}
	r.Ceiling = Ceiling{Concurrency: pf(64), Binding: "knee"}
	p := &prediction.Prediction{Tool: "planner", Planner: "x", Points: []prediction.Point{
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
