package analyze

import (
	"math"
	"testing"
)

// The paper's Figure 2 curve, as the kneed package reproduces it
// (kneed/data_generator.py figure2: x = linspace(0, 1, 10), y = −1/(x+0.1) + 5) and
// tests it (tests/test_sample.py: knee ≈ 0.22, S = 1).
func TestKneedleFigure2(t *testing.T) {
	var x, y []float64
	for i := range 10 {
		xi := float64(i) / 9
		x = append(x, xi)
		y = append(y, -1/(xi+0.1)+5)
	}
	k, ok := kneedle(x, y, 1)
	if !ok || math.Abs(k-2.0/9) > 1e-12 {
		t.Errorf("knee %v %v, want 0.2222", k, ok)
	}
}

// kneed's test_concave_increasing: x = 0..9, y = 100 − [100,40,20,15,10,5,4,3,2,1]
// has its knee at 2.
func TestKneedleConcaveIncreasing(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	y := []float64{0, 60, 80, 85, 90, 95, 96, 97, 98, 99}
	k, ok := kneedle(x, y, 1)
	if !ok || k != 2 {
		t.Errorf("knee %v %v, want 2", k, ok)
	}
	// Order of input does not matter.
	k, ok = kneedle([]float64{9, 0, 5, 1, 2, 3, 4, 6, 7, 8}, []float64{99, 0, 95, 60, 80, 85, 90, 96, 97, 98}, 1)
	if !ok || k != 2 {
		t.Errorf("shuffled: knee %v %v, want 2", k, ok)
	}
	// A straight line has no knee; too few points have none either.
	if _, ok := kneedle([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 1); ok {
		t.Error("line: found a knee")
	}
	if _, ok := kneedle([]float64{1, 2}, []float64{1, 2}, 1); ok {
		t.Error("two points: found a knee")
	}
}

// TestKneeCeilingShapes: the knee of analyze is kneerule's, on the levels' own
// throughput with the run-to-run floor (no bootstrap intervals here).
func TestKneeCeilingShapes(t *testing.T) {
	tests := []struct {
		name  string
		pts   [][2]float64
		want  float64
		ok    bool
		drops int
	}{
		{"plateau at 16", [][2]float64{{1, 100}, {2, 200}, {4, 390}, {8, 750}, {16, 1300}, {32, 1380}, {64, 1400}}, 16, true, 0},
		{"still rising", [][2]float64{{1, 100}, {2, 200}, {4, 390}, {8, 750}}, 0, false, 0},
		// One dip at 8 within the noise followed by real growth is not a plateau.
		{"dip then growth", [][2]float64{{1, 100}, {2, 200}, {4, 400}, {8, 390}, {16, 800}, {32, 820}}, 16, true, 0},
		// Slow creep: 8% per doubling from 4 on, significantly below 10% over four levels.
		{"creep", [][2]float64{{1, 100}, {2, 190}, {4, 300}, {8, 324}, {16, 350}, {32, 378}}, 4, true, 0},
		// Falling after the peak, each level measured once: drops, interference
		// until measured again, so no knee is named from them.
		{"retrograde, measured once", [][2]float64{{1, 100}, {2, 200}, {4, 300}, {8, 280}, {16, 250}}, 0, false, 2},
		{"single level", [][2]float64{{4, 100}}, 0, false, 0},
	}
	for _, tt := range tests {
		var ls []Level
		for _, p := range tt.pts {
			ls = append(ls, level(int(p[0]), p[1], p[0], 0, 0))
		}
		k, ev, ok, drops := kneeCeiling(ls, defaultPlateauGain)
		if ok != tt.ok || (ok && k != tt.want) || len(drops) != tt.drops {
			t.Errorf("%s: knee %v %v (%d drops), want %v %v (%d): %q %q", tt.name, k, ok, len(drops), tt.want, tt.ok, tt.drops, ev, drops)
		}
	}
}
