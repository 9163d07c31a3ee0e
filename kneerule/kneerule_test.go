package kneerule

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func pts(xs []float64, ys []float64) []Point {
	out := make([]Point, len(xs))
	for i := range xs {
		out[i] = Point{X: xs[i], TokS: ys[i]}
	}
	return out
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pts       []Point
		threshold float64
		found     bool
		knee      float64
		why       string // a phrase Why must hold
		drops     int
	}{
		{"two levels name no knee", pts([]float64{4, 8}, []float64{1000, 1000}), 0.10, false, 0, "a knee needs at least 3", 0},
		{"slot cap at 8", pts([]float64{1, 2, 4, 8, 16, 32}, []float64{100, 200, 400, 800, 800, 800}), 0.10, true, 8, "a line fitted over 3 levels", 0},
		{"still rising", pts([]float64{1, 2, 4, 8}, []float64{100, 190, 350, 600}), 0.10, false, 0, "still rises at the top", 0},
		// The busy-machine case of issue 27: 1,533 → 1,420 tok/s from 3 to 4 is a
		// drop, not a plateau, until c=4 is measured again; without it three
		// rising levels name no knee.
		{"an unconfirmed drop names no knee", pts([]float64{1, 2, 3, 4}, []float64{600, 1100, 1533, 1420}), 0.05, false, 0, "interference until measured again", 1},
		{"a drop measured twice counts", []Point{{X: 1, TokS: 600}, {X: 2, TokS: 1100}, {X: 3, TokS: 1533}, {X: 4, TokS: 1420, Measurements: 2}, {X: 6, TokS: 1400}},
			0.05, true, 3, "below 5%", 1},
		// One doubling apart, a 3% gain is not significantly below 5%: the two
		// levels' run-to-run noise (3% each) covers it.
		{"a small gain on one pair is undecided", pts([]float64{2, 4, 8}, []float64{500, 1000, 1030}), 0.05, false, 0, "not significantly below 5%", 0},
		// The same plateau seen over two more doublings is flat.
		{"the same plateau over more levels is flat", pts([]float64{2, 4, 8, 16, 32}, []float64{500, 1000, 1030, 1020, 1040}), 0.05, true, 4, "fitted over 4 levels", 0},
		// A pause is not a plateau: 16 → 64 rises again.
		{"a pause then a rise", pts([]float64{4, 8, 16, 32, 64}, []float64{400, 800, 810, 1500, 2800}), 0.10, false, 0, "still rises", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge(tc.pts, tc.threshold)
			if j.Found != tc.found || (tc.found && j.Knee != tc.knee) {
				t.Fatalf("found %v knee %g, want %v %g: %s", j.Found, j.Knee, tc.found, tc.knee, j.Why)
			}
			if !strings.Contains(j.Why, tc.why) {
				t.Errorf("why %q lacks %q", j.Why, tc.why)
			}
			if len(j.Drops) != tc.drops {
				t.Errorf("%d drops, want %d: %+v", len(j.Drops), tc.drops, j.Drops)
			}
		})
	}
}

// TestJudgeUnderRunToRunNoise: curves with a known knee, each level's throughput
// perturbed by the run-to-run noise the rule assumes (3%, lognormal), judged 2,000
// times. The knee named must be the true one or none (never a level below it, the
// error that made the headline move between runs), and must be named in most
// runs where the plateau spans two doublings.
func TestJudgeUnderRunToRunNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name      string
		xs        []float64
		curve     func(x float64) float64
		threshold float64
		truth     float64
		minFound  float64 // share of runs that must name the truth
	}{
		{"slot cap 8, ladder", []float64{1, 2, 4, 8, 16, 32}, func(x float64) float64 { return 100 * math.Min(x, 8) }, 0.10, 8, 0.88},
		{"slot cap 8, search threshold", []float64{1, 2, 4, 8, 16, 32}, func(x float64) float64 { return 100 * math.Min(x, 8) }, 0.05, 8, 0.65},
		{"cap 6 among close levels", []float64{1, 2, 3, 4, 5, 6, 7, 8, 12}, func(x float64) float64 { return 250 * math.Min(x, 6) }, 0.10, 6, 0.65},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const runs = 2000
			named, wrong := 0, 0
			for range runs {
				var ps []Point
				for _, x := range tc.xs {
					ps = append(ps, Point{X: x, TokS: tc.curve(x) * math.Exp(RunToRun*rng.NormFloat64())})
				}
				j := Judge(ps, tc.threshold)
				switch {
				case !j.Found:
				case j.Knee == tc.truth:
					named++
				case j.Knee < tc.truth:
					wrong++
				default:
					// Above the truth: the plateau was not significant from it yet.
				}
			}
			t.Logf("named %d, below %d of %d", named, wrong, runs)
			if share := float64(named) / runs; share < tc.minFound {
				t.Errorf("named the knee %g in %.1f%% of runs, want ≥ %.0f%%", tc.truth, 100*share, 100*tc.minFound)
			}
			// One-sided 90% bounds on each step: a knee below the truth needs a
			// rising step to look significantly flat, which should be rare.
			if share := float64(wrong) / runs; share > 0.02 {
				t.Errorf("named a knee below %g in %.1f%% of runs, want ≤ 2%%", tc.truth, 100*share)
			}
		})
	}
}

func TestPairGain(t *testing.T) {
	g := PairGain(Point{X: 4, TokS: 1000}, Point{X: 8, TokS: 1100})
	if math.Abs(g.Value-0.10) > 1e-12 {
		t.Errorf("gain %v, want 10%%", g.Value)
	}
	// Two levels of 3% each: ±z·4.24% in log terms, one doubling apart.
	want := math.Expm1(math.Log(1.1) + z*math.Hypot(RunToRun, RunToRun))
	if math.Abs(g.High-want) > 1e-12 || !(g.Low < g.Value && g.Value < g.High) {
		t.Errorf("interval %v..%v, want high %v", g.Low, g.High, want)
	}
	// Measured four times each, the run-to-run noise halves.
	g4 := PairGain(Point{X: 4, TokS: 1000, Measurements: 4}, Point{X: 8, TokS: 1100, Measurements: 4})
	if !(g4.High-g4.Value < (g.High-g.Value)*0.6) {
		t.Errorf("repeats do not narrow the interval: %v vs %v", g4, g)
	}
}
