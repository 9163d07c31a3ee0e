package analyze

import (
	"math"
	"sort"
)

// levelWindow is one level's steady-state window in Unix nanoseconds.
type levelWindow struct {
	level  int
	ws, we int64
}

// levelWindows lists the windows of a run's levels, in level order.
func levelWindows(acc *runAcc) []levelWindow {
	var out []levelWindow
	for k, l := range acc.levels {
		if l.we > l.ws {
			out = append(out, levelWindow{level: int(k), ws: l.ws, we: l.we})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].level < out[j].level })
	return out
}

// metricLevels aggregates a metric series (seconds from startNs) inside each window:
// a scrape-by-scrape series of a batching server is a sawtooth between idle and
// peak, while the mean and maximum per level are what compare across levels. A
// level with no scrape inside its window (shorter than the scrape interval) is left
// out rather than reported as zero.
func metricLevels(series [][2]float64, windows []levelWindow, startNs int64) []MetricLevel {
	var out []MetricLevel
	for _, w := range windows {
		lo, hi := float64(w.ws-startNs)/1e9, float64(w.we-startNs)/1e9
		ml := MetricLevel{Level: w.level, Max: math.Inf(-1)}
		var sum float64
		for _, p := range series {
			if p[0] < lo || p[0] > hi {
				continue
			}
			ml.N++
			sum += p[1]
			ml.Max = math.Max(ml.Max, p[1])
		}
		if ml.N == 0 {
			continue
		}
		ml.Mean = sum / float64(ml.N)
		out = append(out, ml)
	}
	return out
}
