package analyze

import (
	"math"
	"testing"
)

// Two deployments compared at the same per-user speed: the faster-per-user one
// reaches speeds the other never does; each is interpolated, never extrapolated.
func TestMatchSpeeds(t *testing.T) {
	run := func(id string, pts ...[2]float64) Run {
		r := Run{RunID: id, Decision: &Decision{}}
		for i, p := range pts {
			r.Levels = append(r.Levels, Level{Level: i, Valid: true})
			r.Decision.Levels = append(r.Decision.Levels, LevelDecision{PerUserTokS: p[0], OutputTokSPerGPU: p[1]})
		}
		return r
	}
	a := &Analysis{Runs: []Run{
		run("a", [2]float64{100, 100}, [2]float64{80, 500}, [2]float64{40, 1000}),
		run("b", [2]float64{60, 200}, [2]float64{20, 600}),
	}}
	// An invalid level is left out: b's 9,999 at 50 tok/s/user must not count.
	a.Runs[1].Levels = append(a.Runs[1].Levels, Level{Valid: false})
	a.Runs[1].Decision.Levels = append(a.Runs[1].Decision.Levels, LevelDecision{PerUserTokS: 50, OutputTokSPerGPU: 9999})
	m := MatchSpeeds(a, 2)
	if m == nil || len(m.Curves) != 2 {
		t.Fatalf("matched %+v", m)
	}
	// Overlap 40..60 tok/s/user; the grid steps by 2 over 20..100.
	if m.Speeds[0] != 40 || m.Speeds[len(m.Speeds)-1] != 60 {
		t.Errorf("speeds %v; want 40 to 60", m.Speeds)
	}
	found := false
	for i, s := range m.Speeds {
		if s != 50 {
			continue
		}
		found = true
		// a at 50: between (40, 1000) and (80, 500): 1000 − 10/40 × 500 = 875.
		// b at 50: between (20, 600) and (60, 200): 600 − 30/40 × 400 = 300.
		if got := *m.Curves[0].OutputTokSPerGPU[i]; math.Abs(got-875) > 1e-9 {
			t.Errorf("a at 50: %g; want 875", got)
		}
		if got := *m.Curves[1].OutputTokSPerGPU[i]; math.Abs(got-300) > 1e-9 {
			t.Errorf("b at 50: %g; want 300", got)
		}
		// $2/GPU-hour ÷ (875 × 3600) × 10⁶ = $0.635 per million.
		if got := *m.Curves[0].CostPerMOutput[i]; math.Abs(got-2/(875*3600.0)*1e6) > 1e-12 {
			t.Errorf("a's cost at 50: %g", got)
		}
	}
	if !found {
		t.Errorf("speeds %v lack 50", m.Speeds)
	}
	// One curve only: nothing to compare.
	if m := MatchSpeeds(&Analysis{Runs: a.Runs[:1]}, 2); m != nil {
		t.Errorf("one run: %+v; want nil", m)
	}
}
