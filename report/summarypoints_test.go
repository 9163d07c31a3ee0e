package report

import (
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// Summary-level points get their own section, every line marked SUMMARY-LEVEL with
// their figure beside the measured one, and a point at an unmeasured load says so.
func TestSummarySection(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	lvl := 2
	a := &analyze.Analysis{SummaryChecks: []analyze.SummaryCheck{{SummaryLevel: true, Tool: "inferencex", MeasuredRun: "run1",
		Points: []analyze.SummaryPointCheck{
			{Label: "agg.json element 0", Concurrency: 32, MeasuredLevel: &lvl,
				Theirs:   analyze.Figures{OutputTokSPerGPU: f(890.12), TTFT: f(0.456)},
				Measured: analyze.Figures{OutputTokSPerGPU: f(800), TTFT: f(0.5)},
				DiffPct:  analyze.Figures{OutputTokSPerGPU: f(11.265), TTFT: f(-8.8)}},
			{Label: "agg.json element 1", Concurrency: 64},
		}}}}
	secs := summarySections(a)
	if len(secs) != 1 || len(secs[0].Notes) != 2 {
		t.Fatalf("sections %+v", secs)
	}
	want := []string{"SUMMARY-LEVEL · inferencex · agg.json element 0 · c=32 vs level 2 of run1: output tok/s/GPU 890.1 (measured 800.0, +11%), TTFT 456 ms (measured 500, -9%).",
		"SUMMARY-LEVEL · inferencex · agg.json element 1 · c=64: run run1 measured no level at this load."}
	for i, w := range want {
		if secs[0].Notes[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, secs[0].Notes[i], w)
		}
	}
	if summarySections(&analyze.Analysis{}) != nil {
		t.Error("a section without summary-level points")
	}
}
