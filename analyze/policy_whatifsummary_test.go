package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/summary"
)

// Summary points become levels: per-GPU throughput × the deployment's GPUs (or
// the whole figure as given), per-user speed from TPOT where absent, the decode
// batch by Little's law capped at the concurrency, levels in concurrency order.
func TestRunFromSummary(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := &summary.Summary{Tool: "points-csv", Files: []string{"/x/levels.csv"}, Points: []summary.Point{
		{Label: "row 2", Concurrency: 64, OutputTokSPerGPU: f(130), TPOT: summary.Stats{P50: f(0.05)}, InputTokens: f(8192), OutputTokens: f(1024)},
		{Label: "row 1", Concurrency: 4, OutputTokSPerGPU: f(40), PerUserTokS: f(100), InputTokens: f(8192), OutputTokens: f(1024)},
		{Label: "row 3", Concurrency: 128, OutputTokS: f(2000)},
	}}
	r, basis, err := runFromSummary(s, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Levels) != 3 || basis.Points != 3 || !strings.Contains(r.RunID, "levels.csv") {
		t.Fatalf("run %+v basis %+v", r, basis)
	}
	for _, tt := range []struct {
		c                 int
		out, user, batch  float64
		prompt, outputLen float64
	}{
		{4, 320, 100, 3.2, 8192, 1024}, // 40 × 8 GPUs; 320 ÷ 100 decoding
		{64, 1040, 20, 52, 8192, 1024}, // per-user 1 ÷ 0.05 s; 1040 ÷ 20
		{128, 2000, 0, 128, 0, 0},      // the whole figure; no speed: every request decodes
	} {
		var l *Level
		for i := range r.Levels {
			if r.Levels[i].Concurrency == tt.c {
				l = &r.Levels[i]
			}
		}
		if l == nil || l.OutputTokS != tt.out || math.Abs(l.PerUserTokS-tt.user) > 1e-9 || math.Abs(l.DecodeConcurrency-tt.batch) > 1e-9 ||
			l.MeanPromptTokens != tt.prompt || l.MeanOutputTokens != tt.outputLen || !l.Valid {
			t.Errorf("c=%d: level %+v, want out %g user %g batch %g", tt.c, l, tt.out, tt.user, tt.batch)
		}
	}
	if r.Levels[0].Concurrency != 4 || r.Levels[2].Concurrency != 128 {
		t.Errorf("levels out of concurrency order")
	}
	if _, _, err := runFromSummary(s, 0); err == nil || !strings.Contains(err.Error(), "BudgetInput.GPUs") {
		t.Errorf("per-GPU points without a GPU count: %v", err)
	}
}

// GPU names compare through the catalog, else without form factor.
func TestSameGPU(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"h100", "h100-sxm", true}, {"b200_sxm", "B200", true}, {"b200_sxm", "h100-sxm", false}, {"H200", "h200", true}, {"mi300x", "mi325x", false},
	} {
		if got := sameGPU(tt.a, tt.b); got != tt.same {
			t.Errorf("sameGPU(%q, %q) = %t", tt.a, tt.b, got)
		}
	}
}
