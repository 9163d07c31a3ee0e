package analyze

import (
	"math"
	"slices"
)

// intCounts holds integer per-request values (token counts) as a count per distinct
// value: the exact multiset, in memory bounded by how many different lengths occur
// (at most the model's context length), not by the number of requests. Its
// summaries are those summarize and percentileSorted give on the same values as a
// sorted []float64: every sum of integers below 2^53 is exact in float64, so the
// order of addition does not matter.
type intCounts struct {
	counts map[int64]int64
	n      int64
	sum    int64
}

func (c *intCounts) add(v int64) {
	if c.counts == nil {
		c.counts = map[int64]int64{}
	}
	c.counts[v]++
	c.n++
	c.sum += v
}

// len is the number of values.
func (c *intCounts) len() int { return int(c.n) }

// distinct returns the distinct values, ascending.
func (c *intCounts) distinct() []int64 {
	keys := make([]int64, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// mean is the mean value (NaN when there is none).
func (c *intCounts) mean() float64 {
	if c.n == 0 {
		return math.NaN()
	}
	return float64(c.sum) / float64(c.n)
}

// percentile is percentileSorted of the values (0..100, linear interpolation).
func (c *intCounts) percentile(p float64) float64 {
	if c.n == 0 {
		return math.NaN()
	}
	h := float64(c.n-1) * p / 100
	lo := int64(math.Floor(h))
	keys := c.distinct()
	a, b := c.rank(keys, lo), c.rank(keys, min(lo+1, c.n-1))
	if lo >= c.n-1 {
		return float64(b)
	}
	return float64(a) + (h-float64(lo))*(float64(b)-float64(a))
}

// rank is the k-th smallest value (0-based) given the distinct values ascending.
func (c *intCounts) rank(keys []int64, k int64) int64 {
	var seen int64
	for _, v := range keys {
		seen += c.counts[v]
		if k < seen {
			return v
		}
	}
	return keys[len(keys)-1]
}

// summary is summarize of the values as float64.
func (c *intCounts) summary() Summary {
	s := Summary{N: int(c.n)}
	if c.n == 0 {
		return s
	}
	s.Mean = ptr(c.mean())
	for i, p := range summaryPercentiles {
		s.setPercentile(i, c.percentile(p))
	}
	return s
}

// stats is the count, mean and sample variance of the values: the variance adds
// the squared deviations one value at a time in ascending order, the order of a
// sorted slice of the values.
func (c *intCounts) stats() lengthStats {
	s := lengthStats{n: int(c.n)}
	if c.n == 0 {
		return s
	}
	s.hasLength = true
	s.mean = c.mean()
	for _, x := range c.distinct() {
		d := (float64(x) - s.mean) * (float64(x) - s.mean)
		for range c.counts[x] {
			s.v += d
		}
	}
	if s.n > 1 {
		s.v /= float64(s.n - 1)
	}
	return s
}
