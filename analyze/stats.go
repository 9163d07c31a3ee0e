package analyze

import (
	"math"
	"slices"
)

// Statistics: percentiles interpolate linearly between order statistics
// (numpy.percentile's default "linear" method, DuckDB's quantile_cont), so any engine
// given the same rows gets the same numbers.

// summaryPercentiles are the percentiles every Summary carries.
var summaryPercentiles = [4]float64{50, 90, 95, 99}

// percentileSorted returns the p-th percentile (0..100) of sorted values with linear
// interpolation: position h = (n−1)·p/100, x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
func percentileSorted(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// summarize returns the Summary of values (seconds). It sorts values in place.
func summarize(values []float64) Summary {
	s := Summary{N: len(values)}
	if len(values) == 0 {
		return s
	}
	slices.Sort(values)
	var sum float64
	for _, v := range values {
		sum += v
	}
	s.Mean = ptr(sum / float64(len(values)))
	s.P50 = ptr(percentileSorted(values, 50))
	s.P90 = ptr(percentileSorted(values, 90))
	s.P95 = ptr(percentileSorted(values, 95))
	s.P99 = ptr(percentileSorted(values, 99))
	return s
}

// summarizeNs returns the Summary, in seconds, of durations in nanoseconds. The sum
// and the order statistics are exact integers; only the final division rounds. It
// sorts values in place.
func summarizeNs(values []int64) Summary {
	s := Summary{N: len(values)}
	if len(values) == 0 {
		return s
	}
	slices.Sort(values)
	var sum int64
	for _, v := range values {
		sum += v
	}
	s.Mean = ptr(float64(sum) / float64(len(values)) / 1e9)
	for i, p := range summaryPercentiles {
		v := percentileInt(len(values), p, func(k int) int64 { return values[k] }) / 1e9
		s.setPercentile(i, v)
	}
	return s
}

// percentileInt interpolates the p-th percentile of n sorted integer values given
// by at(k), the k-th smallest.
func percentileInt(n int, p float64, at func(int) int64) float64 {
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(at(n - 1))
	}
	a, b := at(lo), at(lo+1)
	return float64(a) + (h-float64(lo))*float64(b-a)
}

func (s *Summary) setPercentile(i int, v float64) {
	switch i {
	case 0:
		s.P50 = ptr(v)
	case 1:
		s.P90 = ptr(v)
	case 2:
		s.P95 = ptr(v)
	case 3:
		s.P99 = ptr(v)
	}
}

func ptr[T any](v T) *T { return &v }

// gapDenseMax bounds the paged part of a gapHist: gaps below 2^22 µs (4.2 s) are
// counted in pages of gapPageSize consecutive values, allocated only where gaps fall;
// longer (or negative) ones in a map.
const (
	gapDenseMax  = 1 << 22
	gapPageBits  = 12
	gapPageSize  = 1 << gapPageBits
	gapPageCount = gapDenseMax / gapPageSize
)

// gapHist counts integer chunk gaps (µs). Because gaps are integers, the counts are
// an exact representation of the pooled values: percentiles read from them are the
// same order statistics a sort of 100M values would give (a counting sort), in
// memory bounded by the spread of the gaps (32 KiB per 4.1 ms of range in use)
// rather than by their number.
type gapHist struct {
	pages  []*[gapPageSize]int64 // pages[v>>gapPageBits][v&(gapPageSize-1)] = count of v
	sparse map[int32]int64
	n      int64
	sum    int64
}

func (h *gapHist) addAll(gaps []int32) {
	if h.pages == nil {
		h.pages = make([]*[gapPageSize]int64, gapPageCount)
	}
	for _, g := range gaps {
		h.sum += int64(g)
		if uint32(g) < gapDenseMax {
			p := h.pages[g>>gapPageBits]
			if p == nil {
				p = new([gapPageSize]int64)
				h.pages[g>>gapPageBits] = p
			}
			p[g&(gapPageSize-1)]++
			continue
		}
		if h.sparse == nil {
			h.sparse = map[int32]int64{}
		}
		h.sparse[g]++
	}
	h.n += int64(len(gaps))
}

// each calls fn for every distinct gap in ascending order with its count.
func (h *gapHist) each(fn func(v int64, count int64)) {
	var neg, big []int32
	for v := range h.sparse {
		if v < 0 {
			neg = append(neg, v)
		} else {
			big = append(big, v)
		}
	}
	slices.Sort(neg)
	slices.Sort(big)
	for _, v := range neg {
		fn(int64(v), h.sparse[v])
	}
	for pi, p := range h.pages {
		if p == nil {
			continue
		}
		for i, c := range p {
			if c != 0 {
				fn(int64(pi)<<gapPageBits+int64(i), c)
			}
		}
	}
	for _, v := range big {
		fn(int64(v), h.sparse[v])
	}
}

// summary returns the Summary of the pooled gaps in seconds.
func (h *gapHist) summary() Summary {
	s := Summary{N: int(h.n)}
	if h.n == 0 {
		return s
	}
	s.Mean = ptr(float64(h.sum) / float64(h.n) / 1e6)
	// The order statistics needed: ranks ⌊h⌋ and ⌊h⌋+1 of every percentile.
	type need struct {
		rank int64
		val  int64
	}
	var needs []need
	for _, p := range summaryPercentiles {
		x := float64(h.n-1) * p / 100
		lo := int64(math.Floor(x))
		needs = append(needs, need{rank: lo}, need{rank: min(lo+1, h.n-1)})
	}
	order := make([]int, len(needs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(needs[a].rank - needs[b].rank) })
	next := 0
	var seen int64 // values before the current one
	h.each(func(v, c int64) {
		for next < len(order) && needs[order[next]].rank < seen+c {
			needs[order[next]].val = v
			next++
		}
		seen += c
	})
	for i, p := range summaryPercentiles {
		x := float64(h.n-1) * p / 100
		lo := math.Floor(x)
		a, b := needs[2*i].val, needs[2*i+1].val
		s.setPercentile(i, (float64(a)+(x-lo)*float64(b-a))/1e6)
	}
	return s
}

// histogram returns the gaps in log-spaced buckets (10 per decade, edges in
// seconds), for the report's ITL distribution. nil when there are no gaps.
func (h *gapHist) histogram() *Histogram {
	if h.n == 0 {
		return nil
	}
	var lo, hi int64 = -1, 0
	h.each(func(v, c int64) {
		if lo < 0 {
			lo = v
		}
		hi = v
	})
	const perDecade = 10
	first := int(math.Floor(math.Log10(float64(max(lo, 1))) * perDecade))
	last := int(math.Floor(math.Log10(float64(max(hi, 1)))*perDecade)) + 1
	edgesUs := make([]float64, 0, last-first+1)
	for k := first; k <= last; k++ {
		edgesUs = append(edgesUs, math.Pow(10, float64(k)/perDecade))
	}
	counts := make([]int64, len(edgesUs)-1)
	h.each(func(v, c int64) {
		// Bucket i holds [edge_i, edge_i+1); values below the first edge (0 µs) go
		// into the first bucket, the maximum into the last.
		i := 0
		if v > 0 {
			i = int(math.Floor(math.Log10(float64(v))*perDecade)) - first
		}
		i = min(max(i, 0), len(counts)-1)
		// Guard against log10 rounding at exact edges.
		for i+1 < len(edgesUs)-1 && float64(v) >= edgesUs[i+1] {
			i++
		}
		counts[i] += c
	})
	edges := make([]float64, len(edgesUs))
	for i, e := range edgesUs {
		edges[i] = e / 1e6
	}
	return &Histogram{Edges: edges, Counts: counts}
}
