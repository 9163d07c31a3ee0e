package compare

import (
	"fmt"
	"math"
	"sort"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The realistic ceiling is a whole number of requests chosen by rules, not a
// mean: its difference is tested on the ceilings the analysis' resamples gave
// (analyze.CeilingStability: each value and its share). A side of several runs
// is the equal mixture of its runs' distributions, so that a ceiling that moves
// between repeats counts as the noise it is. "No ceiling found in the tested
// range" ranks above every ceiling. The two-sided p-value is twice the smaller of
// P(candidate < baseline) and P(candidate > baseline), ties split between them,
// for independent draws from the two distributions.

// outcome is one ceiling a side's resamples gave, and its share.
type outcome struct {
	value *float64
	share float64
}

// rank orders ceilings, none (no ceiling in the tested range) above all.
func rank(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}

// ceilingOutcomes is a side's mixture of its runs' resampled ceilings; ok is
// false when a run has no resamples of its ceiling (an imported run).
func ceilingOutcomes(runs []analyze.Run) (out []outcome, ok bool) {
	w := 1 / float64(len(runs))
	for _, r := range runs {
		if r.Bootstrap == nil || r.Bootstrap.Ceiling == nil {
			return nil, false
		}
		for _, o := range r.Bootstrap.Ceiling.Outcomes {
			out = append(out, outcome{o.Concurrency, w * o.Share})
		}
	}
	return out, true
}

// sideCeiling is a side's realistic ceiling: the run's own, or the lower median
// of its runs' (none ranking highest), and the words saying how stable it is.
func sideCeiling(runs []analyze.Run) (*float64, string) {
	if len(runs) == 1 {
		r := runs[0]
		text := ""
		if r.Bootstrap != nil && r.Bootstrap.Ceiling != nil {
			text = r.Bootstrap.Ceiling.Text
		}
		return r.Ceiling.Concurrency, text
	}
	vs := make([]*float64, len(runs))
	for i := range runs {
		vs[i] = runs[i].Ceiling.Concurrency
	}
	sort.SliceStable(vs, func(i, j int) bool { return rank(vs[i]) < rank(vs[j]) })
	words := ""
	for i, v := range vs {
		if i > 0 {
			words += ", "
		}
		words += ceilingWord(v)
	}
	return vs[(len(vs)-1)/2], "median of the repeats' " + words
}

func ceilingWord(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%g", *v)
}

// diffCeiling compares the sides' realistic ceilings; nil when neither found one
// (nothing to compare: the tested range was too low for both).
func diffCeiling(base, cand []analyze.Run) *CeilingDiff {
	cb, tb := sideCeiling(base)
	cc, tc := sideCeiling(cand)
	if cb == nil && cc == nil {
		return nil
	}
	c := &CeilingDiff{Baseline: cb, Candidate: cc, BaselineText: tb, CandidateText: tc}
	d := MetricDiff{Metric: "ceiling", higherBetter: true, Baseline: cb, Candidate: cc, Verdict: NotTested, Method: methodCeiling}
	if cb != nil && cc != nil && *cb > 0 {
		d.Change = f64(*cc / *cb - 1)
	}
	ob, okb := ceilingOutcomes(base)
	oc, okc := ceilingOutcomes(cand)
	if !okb || !okc {
		d.Note = "a run has no resamples of its ceiling (an imported run, or the bootstrap off)"
		c.Diff = d
		return c
	}
	var below, above, tie float64 // candidate vs baseline
	for _, x := range oc {
		for _, y := range ob {
			w := x.share * y.share
			switch rx, ry := rank(x.value), rank(y.value); {
			case rx < ry:
				below += w
			case rx > ry:
				above += w
			default:
				tie += w
			}
		}
	}
	d.P = f64(math.Min(1, 2*math.Min(below+tie/2, above+tie/2)))
	c.Diff = d
	return c
}
