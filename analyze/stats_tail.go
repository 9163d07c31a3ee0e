package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
	"github.com/ceiling-llm/ceiling/searchrule"
)

// Tail percentiles with a sample-size guard: the p-th percentile says something
// about the 1 − p/100 slowest share only when at least one value lies in that
// share, so it needs n ≥ 1/(1 − p/100) values (p99.9: 1,000; p99: 100; p95: 20).
// Below that the value would be the maximum, or an interpolation towards it, dressed
// up as a tail figure: it is given as null with a note instead, never as a number.

// defaultTail is the tail percentile every level reports.
const defaultTail = 99.9

// tailPercentiles is p99.9 and the asked percentiles, sorted, without duplicates or
// the ones every Summary carries already.
func tailPercentiles(asked []float64) []float64 {
	out := []float64{defaultTail}
	for _, p := range asked {
		if p > 0 && p < 100 && !slices.Contains(summaryPercentiles[:], p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TailNeed is the number of values the p-th percentile needs (searchrule's rule,
// which the search sizes its levels by).
func TailNeed(p float64) int { return searchrule.TailNeed(p) }

// PercentileName is how a percentile is written: p99.9, p95, p97.5.
func PercentileName(p float64) string { return searchrule.PercentileName(p) }

// tailOf builds the tail percentiles from n sorted values given by at(k) (seconds).
func tailOf(n int, at func(int) float64, ps []float64, what string) []TailPercentile {
	var out []TailPercentile
	for _, p := range ps {
		t := TailPercentile{P: p, N: n, Need: TailNeed(p)}
		if n >= t.Need && n > 0 {
			h := float64(n-1) * p / 100
			lo := int(math.Floor(h))
			v := at(n - 1)
			if lo < n-1 {
				v = at(lo) + (h-float64(lo))*(at(lo+1)-at(lo))
			}
			t.Value = ptr(v)
		} else {
			t.Note = fmt.Sprintf("%s needs ≥ %s %s; this level has %s", PercentileName(p), numfmt.Int(int64(t.Need)), what, numfmt.Int(int64(n)))
		}
		out = append(out, t)
	}
	return out
}

// tailNs is tailOf for sorted nanoseconds.
func tailNs(sorted []int64, ps []float64, what string) []TailPercentile {
	return tailOf(len(sorted), func(k int) float64 { return float64(sorted[k]) / 1e9 }, ps, what)
}

// tailFloat is tailOf for sorted seconds.
func tailFloat(sorted []float64, ps []float64, what string) []TailPercentile {
	return tailOf(len(sorted), func(k int) float64 { return sorted[k] }, ps, what)
}

// tail is tailOf for the pooled gaps: the order statistics needed are read in one
// pass over the counts.
func (h *gapHist) tail(ps []float64) []TailPercentile {
	n := int(h.n)
	ranks := map[int64]int64{}
	for _, p := range ps {
		if n == 0 || n < TailNeed(p) {
			continue
		}
		x := float64(n-1) * p / 100
		lo := int64(math.Floor(x))
		ranks[lo], ranks[min(lo+1, h.n-1)] = 0, 0
	}
	if len(ranks) > 0 {
		want := make([]int64, 0, len(ranks))
		for r := range ranks {
			want = append(want, r)
		}
		slices.Sort(want)
		next := 0
		var seen int64
		h.each(func(v, c int64) {
			for next < len(want) && want[next] < seen+c {
				ranks[want[next]] = v
				next++
			}
			seen += c
		})
	}
	return tailOf(n, func(k int) float64 { return float64(ranks[int64(k)]) / 1e6 }, ps, "gaps")
}

// TailValue returns the p-th percentile of s and, when it cannot be told, why: the
// four percentiles every Summary carries, then its Tail.
func (s Summary) TailValue(p float64) (*float64, string) {
	for i, q := range summaryPercentiles {
		if q == p {
			v := [...]*float64{s.P50, s.P90, s.P95, s.P99}[i]
			if v == nil {
				return nil, fmt.Sprintf("%s: no value measured", PercentileName(p))
			}
			return v, ""
		}
	}
	for _, t := range s.Tail {
		if t.P == p {
			return t.Value, t.Note
		}
	}
	return nil, fmt.Sprintf("%s was not computed", PercentileName(p))
}
