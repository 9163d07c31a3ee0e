package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPercentileSortedMatchesNumpy(t *testing.T) {
	// Values from numpy.percentile(x, p) with the default linear method.
	for _, tc := range []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 90, 3.7},
		{[]float64{1, 2, 3, 4}, 99, 3.97},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{7}, 99, 7},
		{[]float64{10, 20}, 95, 19.5},
		{[]float64{1, 3, 3, 10, 20}, 50, 3},
		{[]float64{1, 3, 3, 10, 20}, 90, 16},
	} {
		if got := percentileSorted(tc.x, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("percentile(%v, %g) = %g, want %g", tc.x, tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(percentileSorted(nil, 50)) {
		t.Error("percentile of nothing should be NaN")
	}
}

func TestSummaryEmpty(t *testing.T) {
	for _, s := range []Summary{summarize(nil), summarizeNs(nil), (&gapHist{}).summary()} {
		if s.N != 0 || s.Mean != nil || s.P50 != nil || s.P99 != nil {
			t.Errorf("empty summary = %+v, want n 0 and nulls", s)
		}
	}
}

// TestGapHistMatchesSort: the counting histogram gives the same statistics as
// sorting the pooled values, including gaps beyond the dense range and negative ones.
func TestGapHistMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 101, 5000} {
		var h gapHist
		var vals []float64
		var chunk []int32
		for i := range n {
			var g int32
			switch i % 7 {
			case 0:
				g = int32(rng.IntN(gapDenseMax * 3)) // beyond the dense range
			case 1:
				g = -int32(rng.IntN(50)) // clock trouble: must not crash or be lost
			default:
				g = int32(rng.IntN(30000))
			}
			chunk = append(chunk, g)
			if len(chunk) == 13 {
				h.addAll(chunk)
				chunk = chunk[:0]
			}
			vals = append(vals, float64(g)/1e6)
		}
		h.addAll(chunk)
		got := h.summary()
		want := summarize(slices.Clone(vals))
		if got.N != want.N {
			t.Fatalf("n = %d, want %d", got.N, want.N)
		}
		for _, pair := range [][2]*float64{{got.Mean, want.Mean}, {got.P50, want.P50}, {got.P90, want.P90}, {got.P95, want.P95}, {got.P99, want.P99}} {
			if math.Abs(*pair[0]-*pair[1]) > 1e-12*math.Max(1, math.Abs(*pair[1])) {
				t.Errorf("n=%d: hist %+v, sort %+v", n, fmtSummary(got), fmtSummary(want))
				break
			}
		}
		hist := h.histogram()
		var total int64
		for _, c := range hist.Counts {
			total += c
		}
		if total != int64(n) || len(hist.Edges) != len(hist.Counts)+1 {
			t.Errorf("n=%d: histogram holds %d values in %d buckets with %d edges", n, total, len(hist.Counts), len(hist.Edges))
		}
	}
}

func fmtSummary(s Summary) [5]float64 {
	return [5]float64{*s.Mean, *s.P50, *s.P90, *s.P95, *s.P99}
}

func TestHistogramBuckets(t *testing.T) {
	var h gapHist
	h.addAll([]int32{0, 100, 100, 1000, 9999, 10000})
	hg := h.histogram()
	// Edges are 10 per decade from 1 µs: 1000 µs falls in [1000, 1258.9).
	find := func(us float64) int {
		for i := range hg.Counts {
			if us/1e6 >= hg.Edges[i] && us/1e6 < hg.Edges[i+1] {
				return i
			}
		}
		return len(hg.Counts) - 1
	}
	if hg.Counts[find(100)] != 2 || hg.Counts[find(1000)] != 1 || hg.Counts[0] != 1 {
		t.Errorf("histogram = %+v", hg)
	}
	if math.Abs(hg.Edges[0]-1e-6) > 1e-18 {
		t.Errorf("first edge = %g, want 1 µs", hg.Edges[0])
	}
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		w          windowAcc
		start, end int64
		steady     bool
	}{
		{"closed", windowAcc{n: 4, firstSent: 0, lastEnd: 100, workers: map[int32]*[2]int64{0: {0, 90}, 1: {5, 100}}}, 5, 90, true},
		{"never all busy", windowAcc{n: 2, firstSent: 0, lastEnd: 100, workers: map[int32]*[2]int64{0: {0, 10}, 1: {50, 100}}}, 0, 100, false},
		{"open loop", windowAcc{n: 3, rate: 2, firstSent: 1, lastEnd: 100, minSched: 0, maxSched: 60}, 0, 60, true},
		{"open loop one arrival", windowAcc{n: 1, rate: 2, firstSent: 1, lastEnd: 100, minSched: 0, maxSched: 0}, 1, 100, false},
	} {
		s, e, st := tc.w.window()
		if s != tc.start || e != tc.end || st != tc.steady {
			t.Errorf("%s: window = %d..%d steady %v, want %d..%d %v", tc.name, s, e, st, tc.start, tc.end, tc.steady)
		}
	}
}
