package analyze

import (
	"math"
	"sort"
)

// Repeats (ceiling record --repeat N): the levels of one sweep point, the same
// offered concurrency or rate, are its repeats. Every repeat stays a level of its
// own; the ceilings and fits see one pooled level per point, and the repeats each
// alone say whether the ceiling moves between them.

type pointKey struct {
	concurrency int
	rate        float64
	first       int // the level index of the point's repeat 0
}

// pointOf is the sweep point a level records. Repeats run back to back, so level
// index minus repeat number is the point's first level: two levels at the same
// concurrency that are not marked as repeats (an imported sweep over prompt lengths,
// say) stay two points.
func pointOf(l Level) pointKey { return pointKey{l.Concurrency, l.Rate, l.Level - l.Repeat} }

// pointGroups groups levels by sweep point, in order of each point's first level.
func pointGroups(levels []Level) [][]Level {
	var groups [][]Level
	at := map[pointKey]int{}
	for _, l := range levels {
		k := pointOf(l)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], l)
	}
	return groups
}

// poolRepeats returns one level per sweep point: a point's only level as it is,
// else its first repeat carrying the mean of the repeats' throughput and
// concurrencies and the median of their p99 latencies (what the ceiling rules read).
// levels are the valid ones.
func poolRepeats(levels []Level) []Level {
	groups := pointGroups(levels)
	if len(groups) == len(levels) {
		return levels
	}
	out := make([]Level, 0, len(groups))
	for _, g := range groups {
		p := g[0]
		if len(g) == 1 {
			out = append(out, p)
			continue
		}
		p.OutputTokS = meanOf(g, func(l Level) float64 { return l.OutputTokS })
		p.pooled, p.pooledRelSE = len(g), meanRelSE(g, p.OutputTokS)
		p.RequestS = meanOf(g, func(l Level) float64 { return l.RequestS })
		p.DecodeConcurrency = meanOf(g, func(l Level) float64 { return l.DecodeConcurrency })
		p.WaitingConcurrency = meanOf(g, func(l Level) float64 { return l.WaitingConcurrency })
		p.TTFT.P99 = medianOf(g, func(l Level) *float64 { return l.TTFT.P99 })
		p.TPOT.P99 = medianOf(g, func(l Level) *float64 { return l.TPOT.P99 })
		p.E2E.P99 = medianOf(g, func(l Level) *float64 { return l.E2E.P99 })
		p.Requests, p.Errors = 0, 0
		for _, l := range g {
			p.Requests += l.Requests
			p.Errors += l.Errors
		}
		out = append(out, p)
	}
	return out
}

// meanRelSE is the relative standard error of the repeats' mean throughput, from
// their own spread: what the next run would move the mean by.
func meanRelSE(g []Level, mean float64) float64 {
	if len(g) < 2 || mean <= 0 {
		return 0
	}
	var ss float64
	for _, l := range g {
		ss += (l.OutputTokS - mean) * (l.OutputTokS - mean)
	}
	sd := math.Sqrt(ss / float64(len(g)-1))
	return sd / mean / math.Sqrt(float64(len(g)))
}

func meanOf(g []Level, f func(Level) float64) float64 {
	var s float64
	for _, l := range g {
		s += f(l)
	}
	return s / float64(len(g))
}

// medianOf is the median of the non-null values, null when there are none.
func medianOf(g []Level, f func(Level) *float64) *float64 {
	var v []float64
	for _, l := range g {
		if p := f(l); p != nil {
			v = append(v, *p)
		}
	}
	if len(v) == 0 {
		return nil
	}
	sort.Float64s(v)
	n := len(v)
	return ptr((v[(n-1)/2] + v[n/2]) / 2)
}

// repeatRun fills r.Repeats and r.RepeatCeiling, and warns when the realistic
// ceiling moves between repeats. It needs r.Ceiling and r.Ceilings.KV computed.
func repeatRun(r *Run, opt Options) {
	all := pointGroups(r.Levels)
	if len(all) == len(r.Levels) {
		return // no point was recorded twice
	}
	for _, g := range all {
		s := RepeatSpread{Concurrency: g[0].Concurrency, Rate: g[0].Rate}
		first := true
		for _, l := range g {
			s.Levels = append(s.Levels, l.Level)
			if !l.Valid {
				continue
			}
			if first || l.OutputTokS < s.OutputTokSMin {
				s.OutputTokSMin = l.OutputTokS
			}
			if first || l.OutputTokS > s.OutputTokSMax {
				s.OutputTokSMax = l.OutputTokS
			}
			first = false
			if t := l.TTFT.P99; t != nil {
				if s.TTFTP99Min == nil || *t < *s.TTFTP99Min {
					s.TTFTP99Min = ptr(*t)
				}
				if s.TTFTP99Max == nil || *t > *s.TTFTP99Max {
					s.TTFTP99Max = ptr(*t)
				}
			}
		}
		r.Repeats = append(r.Repeats, s)
	}

	// The ceiling of each repeat alone, from its valid levels. A repeat that lacks
	// a point the others have (an invalid level, an interrupted sweep) would move
	// the ceiling for that reason alone: it is left out of the comparison.
	valid := validLevels(r.Levels)
	points := len(pointGroups(valid))
	byRepeat := map[int][]Level{}
	for _, l := range valid {
		byRepeat[l.Repeat] = append(byRepeat[l.Repeat], l)
	}
	reps := make([]int, 0, len(byRepeat))
	for k, ls := range byRepeat {
		if len(pointGroups(ls)) == points {
			reps = append(reps, k)
		}
	}
	if len(reps) < 2 {
		return
	}
	sort.Ints(reps)
	values := make([]*float64, len(reps))
	for i, k := range reps {
		values[i] = ceilingOf(byRepeat[k], confirmedKV(r), r.Ceilings.Errors, runSlots(r), opt)
	}
	st := stabilityOf(r.Ceiling.Concurrency, values, "repeats")
	st.Stable = st.Share == 1 // a repeat that disagrees is not noise to outvote
	// A handful of repeats have no middle 95%: the range is all of them.
	for _, v := range append(values, r.Ceiling.Concurrency) {
		if v == nil {
			continue
		}
		if st.Low == nil || *v < *st.Low {
			st.Low = ptr(*v)
		}
		if st.High == nil || *v > *st.High {
			st.High = ptr(*v)
		}
	}
	r.RepeatCeiling = st
	if !st.Stable {
		r.Warnings = append(r.Warnings, "the realistic ceiling moves between repeats: "+st.Text+
			" (pooled: "+ceilingWord(r.Ceiling.Concurrency)+"): read it as the range "+st.RangeText()+
			", and rerun with longer levels or more repeats to narrow it")
	}
}
