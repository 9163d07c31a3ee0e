package compare

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/analyze"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// confidence is the confidence of every interval shown; alpha = 1 − confidence
// is also the family-wise false-alarm rate of the gated tests (gate.go).
const (
	confidence = 0.95
	alpha      = 1 - confidence
)

// metric is one figure of a level compared on the log scale (candidate ÷ baseline).
type metric struct {
	name         string
	higherBetter bool
	value        func(l *analyze.Level) *float64
	// resamples are the level's bootstrap resamples of the figure, nil where the
	// analysis has none; ci its interval, for a level decoded from JSON.
	resamples func(rs *analyze.LevelResamples) []float64
	ci        func(ci *analyze.LevelCI) *analyze.Interval
	// tail is the latency summary of a p99, whose count decides whether one run
	// a side can test it (minTailRequests); nil for other metrics.
	tail func(l *analyze.Level) analyze.Summary
}

// minTailRequests is the fewest requests per level (each side) a p99 is tested
// from with one run a side: the fewest whose largest value is above the true p99
// with 97.5% probability (1 − 0.99ⁿ ≥ 0.975), so that a distribution-free 95%
// interval of the p99 exists at all. Below it the p99 is the level's largest
// value or next to it, and the bootstrap, which never draws beyond the largest
// value, gives it too narrow an interval: on the test engine 6 of 20 A/A pairs
// of 60-request levels differed "significantly" in TTFT p99 (docs/compare.md).
// Repeats test it at any size: their spread is measured, not modelled.
const minTailRequests = 368

func f64(v float64) *float64 { return &v }

// ratioMetrics are the level figures compared as ratios, in display order; the
// error rate (errorrate.go) and the ceiling (ceiling.go) have their own tests.
var ratioMetrics = []metric{
	{"output_tok_s", true, func(l *analyze.Level) *float64 { return f64(l.OutputTokS) },
		func(rs *analyze.LevelResamples) []float64 { return rs.OutputTokS },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.OutputTokS }, nil},
	{"request_s", true, func(l *analyze.Level) *float64 { return f64(l.RequestS) },
		func(rs *analyze.LevelResamples) []float64 { return rs.RequestS },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.RequestS }, nil},
	{"goodput_request_s", true, func(l *analyze.Level) *float64 { return l.GoodputRequestS }, nil, nil, nil},
	{"ttft_p50_s", false, func(l *analyze.Level) *float64 { return l.TTFT.P50 },
		func(rs *analyze.LevelResamples) []float64 { return rs.TTFTP50 },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.TTFTP50 }, nil},
	{"ttft_p99_s", false, func(l *analyze.Level) *float64 { return l.TTFT.P99 },
		func(rs *analyze.LevelResamples) []float64 { return rs.TTFTP99 },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.TTFTP99 },
		func(l *analyze.Level) analyze.Summary { return l.TTFT }},
	{"tpot_p50_s", false, func(l *analyze.Level) *float64 { return l.TPOT.P50 },
		func(rs *analyze.LevelResamples) []float64 { return rs.TPOTP50 },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.TPOTP50 }, nil},
	{"tpot_p99_s", false, func(l *analyze.Level) *float64 { return l.TPOT.P99 },
		func(rs *analyze.LevelResamples) []float64 { return rs.TPOTP99 },
		func(ci *analyze.LevelCI) *analyze.Interval { return ci.TPOTP99 },
		func(l *analyze.Level) analyze.Summary { return l.TPOT }},
	{"e2e_p50_s", false, func(l *analyze.Level) *float64 { return l.E2E.P50 },
		func(rs *analyze.LevelResamples) []float64 { return rs.E2EP50 }, nil, nil},
	{"e2e_p99_s", false, func(l *analyze.Level) *float64 { return l.E2E.P99 },
		func(rs *analyze.LevelResamples) []float64 { return rs.E2EP99 }, nil,
		func(l *analyze.Level) analyze.Summary { return l.E2E }},
}

// logSE is the standard error of the log of a level's figure from one run: the
// standard deviation of the log resamples, else (a level read back from JSON)
// the width of its 95% interval on the log scale ÷ 2 × 1.96. Goodput has no
// resamples of its own: its request rate's variance plus the binomial variance
// of the share of completions that met the SLOs (the delta method).
func logSE(m metric, l *analyze.Level) (float64, bool) {
	if m.name == "goodput_request_s" {
		req, ok := logSE(ratioMetrics[1], l)
		if !ok || l.GoodputRequestS == nil || l.RequestS <= 0 || l.WindowCompletions == 0 {
			return 0, false
		}
		g := *l.GoodputRequestS / l.RequestS
		if g <= 0 {
			return 0, false
		}
		return math.Sqrt(req*req + (1-g)/(g*float64(l.WindowCompletions))), true
	}
	if rs := l.Resamples(); rs != nil && m.resamples != nil {
		v := m.resamples(rs)
		if len(v) < 2 {
			return 0, false
		}
		logs := make([]float64, 0, len(v))
		for _, x := range v {
			if x > 0 {
				logs = append(logs, math.Log(x))
			}
		}
		if len(logs) < len(v)*9/10 { // mostly zeros: the log scale says nothing
			return 0, false
		}
		return stat.StdDev(logs, nil), true
	}
	if l.CI != nil && m.ci != nil {
		if iv := m.ci(l.CI); iv != nil && iv.Low > 0 && iv.High > 0 {
			z := distuv.UnitNormal.Quantile(1 - alpha/2)
			return (math.Log(iv.High) - math.Log(iv.Low)) / (2 * z), true
		}
	}
	return 0, false
}

// diffRatio tests one metric at one point. One unit on each side: a z test of the
// log ratio with each side's bootstrap standard error (the two resamplings are
// independent). More units on a side: a two-sample t test on the log values with
// the pooled variance of the units (df = units − 2), so that run-to-run variance
// is what the difference is measured against.
func diffRatio(m metric, base, cand []unit) MetricDiff {
	d := MetricDiff{Metric: m.name, higherBetter: m.higherBetter, Verdict: NotTested}
	logs := func(us []unit) ([]float64, string) {
		var out []float64
		invalid := ""
		for _, u := range us {
			if !u.level.Valid {
				// An invalid level measured nothing: its repeats stand without it.
				invalid = u.level.InvalidReason
				continue
			}
			v := m.value(u.level)
			if v == nil {
				return nil, "no " + m.name + " at this level"
			}
			if *v <= 0 {
				return nil, fmt.Sprintf("%s is %g at this level", m.name, *v)
			}
			out = append(out, math.Log(*v))
		}
		if len(out) == 0 {
			return nil, "the level is invalid (" + invalid + ")"
		}
		return out, ""
	}
	lb, why := logs(base)
	if why != "" {
		d.Note = "baseline: " + why
		return d
	}
	lc, why := logs(cand)
	if why != "" {
		d.Note = "candidate: " + why
		return d
	}
	mb, mc := stat.Mean(lb, nil), stat.Mean(lc, nil)
	d.Baseline, d.Candidate = f64(math.Exp(mb)), f64(math.Exp(mc))
	d.units = [2]int{len(lb), len(lc)}
	for i, us := range [][]unit{base, cand} {
		for _, u := range us {
			if u.level.Valid {
				d.n[i] += u.level.Requests
			}
		}
	}
	delta := mc - mb
	d.Change = f64(math.Expm1(delta))

	var se, q, p float64
	if len(lb) == 1 && len(lc) == 1 {
		if m.tail != nil {
			nb, nc := m.tail(validUnit(base)).N, m.tail(validUnit(cand)).N
			if min(nb, nc) < minTailRequests {
				d.Note = fmt.Sprintf("a p99 of %d requests rests on its few largest values: one run a side tests it from %d requests per level; record more, or repeats",
					min(nb, nc), minTailRequests)
				return d
			}
		}
		sb, okb := logSE(m, validUnit(base))
		sc, okc := logSE(m, validUnit(cand))
		if !okb || !okc {
			side := "baseline"
			if okb {
				side = "candidate"
			}
			d.Note = side + ": no interval at this level (too few requests, too short a window, or no resamples)"
			return d
		}
		d.Method = methodBoot
		se = math.Hypot(sb, sc)
		q = distuv.UnitNormal.Quantile(1 - alpha/2)
		p = twoSided(delta, se, func(x float64) float64 { return distuv.UnitNormal.CDF(x) })
	} else {
		d.Method = methodRepeats
		df := float64(len(lb) + len(lc) - 2)
		ss := sumSquares(lb, mb) + sumSquares(lc, mc)
		se = math.Sqrt(ss / df * (1/float64(len(lb)) + 1/float64(len(lc))))
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		q = t.Quantile(1 - alpha/2)
		p = twoSided(delta, se, t.CDF)
	}
	d.se = se
	d.P = f64(p)
	d.Low, d.High = f64(math.Expm1(delta-q*se)), f64(math.Expm1(delta+q*se))
	return d
}

func sumSquares(v []float64, mean float64) float64 {
	var s float64
	for _, x := range v {
		s += (x - mean) * (x - mean)
	}
	return s
}

// twoSided is the two-sided p-value of delta with standard error se under a
// symmetric distribution with this CDF. A zero standard error (identical
// figures) gives 1 for no difference and 0 for any.
func twoSided(delta, se float64, cdf func(float64) float64) float64 {
	if se == 0 {
		if delta == 0 {
			return 1
		}
		return 0
	}
	return math.Min(1, 2*cdf(-math.Abs(delta)/se))
}

// validUnit is the one valid level of units.
func validUnit(us []unit) *analyze.Level {
	for _, u := range us {
		if u.level.Valid {
			return u.level
		}
	}
	return nil
}
