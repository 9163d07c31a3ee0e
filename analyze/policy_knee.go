package analyze

import (
	"math"
	"sort"
)

// defaultPlateauGain is the throughput gain per doubling of concurrency below which a
// curve counts as flat: beyond the knee, doubling the offered concurrency buys less than
// 10% more tokens per second while every user's latency grows. Linear scaling gains
// 100% per doubling; a memory-bound decode that still batches well gains 30-90%.
const defaultPlateauGain = 0.10

// kneedle finds the knee of a concave increasing curve (Satopaa, Albrecht, Irwin and
// Raghavan, "Finding a 'Kneedle' in a Haystack: Detecting Knee Points in System
// Behavior", ICDCS workshops 2011), in its offline form as the kneed package implements
// it: normalize x and y to [0,1], take the difference curve y_n − x_n, and declare the
// knee at a local maximum of the difference once the curve falls below that maximum
// minus S × the mean x step before the next local maximum. The paper's smoothing step
// is left out: levels are few and already averages. ok is false when no knee is found
// (for example when the curve is still rising at its last point).
func kneedle(x, y []float64, s float64) (knee float64, ok bool) {
	n := len(x)
	if n < 3 || len(y) != n {
		return 0, false
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	xs, ys := make([]float64, n), make([]float64, n)
	for i, j := range idx {
		xs[i], ys[i] = x[j], y[j]
	}
	xn, yn := normalize(xs), normalize(ys)
	if xn == nil || yn == nil {
		return 0, false
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = yn[i] - xn[i]
	}
	// Mean step of the normalized x is 1/(n−1).
	step := 1 / float64(n-1)
	threshold := math.NaN()
	maxAt := -1
	for i := 1; i < n; i++ {
		if i < n-1 && d[i] > d[i-1] && d[i] > d[i+1] {
			// A new local maximum resets the threshold.
			maxAt = i
			threshold = d[i] - s*step
			continue
		}
		if maxAt < 0 {
			continue
		}
		if i < n-1 && d[i] < d[i-1] && d[i] < d[i+1] {
			// A local minimum before the threshold was crossed: the curve turns up
			// again, so the previous maximum was not the knee.
			threshold = 0
		}
		if d[i] < threshold || threshold < 0 {
			return xs[maxAt], true
		}
	}
	return 0, false
}

func normalize(v []float64) []float64 {
	lo, hi := v[0], v[0]
	for _, a := range v {
		lo, hi = math.Min(lo, a), math.Max(hi, a)
	}
	if hi == lo {
		return nil
	}
	out := make([]float64, len(v))
	for i, a := range v {
		out[i] = (a - lo) / (hi - lo)
	}
	return out
}
