// Package kneerule is the one rule that says where a throughput curve turns flat,
// with the uncertainty a level's throughput really has. The ceiling search
// (record --concurrency auto) fails levels past the knee it finds, and analyze
// names the knee of a sweep with it, so a search and the analysis of its trace
// give one answer.
//
// The rule, on the valid levels of one run sorted by concurrency (or rate):
//
//   - Each level's throughput carries a relative standard error: the larger of
//     what resampling within the level says and RunToRun, the spread a level's
//     throughput has from one run to the next on the same server, which no
//     resampling of one run sees. A level measured n times (repeats, or the
//     search's re-measure of a drop) has the mean of its measurements, and
//     RunToRun/√n, or their own spread where it is larger.
//   - A knee needs MinLevels valid levels: from two, any step is a knee.
//   - A drop, a level whose throughput is significantly below the level before
//     it, is interference (a busy machine, a noisy neighbour) until it has been
//     measured again: such a level is flagged and left out of the knee. Measured
//     twice and still below, it is real (a server that degrades past its
//     capacity) and it counts.
//   - The curve is flat from level i when the gain per doubling of a straight
//     line fitted to log throughput against log2 concurrency over level i and
//     every level above it is significantly below the threshold (the upper end of
//     its interval is below it), and no level above i lies significantly above
//     the threshold's growth from i. The knee is the lowest such level; the last
//     level cannot be one (a plateau needs a level beyond it).
//
// Intervals are two-sided at Confidence (80%): "significantly below" means the
// one-sided 90% bound. The fit pools every level of the plateau, so the plateau
// of a sweep is judged on all of it rather than on one noisy pair of levels.
package kneerule

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

const (
	// MinLevels is the fewest valid levels a knee is named from.
	MinLevels = 3
	// RunToRun is the relative standard error of one level's throughput between
	// runs on one server that the rule assumes when it has no repeats to measure it
	// from: a quiet GPU server repeats a level to 1-3%; 3% keeps a busy one's
	// drops (7% on a 2-core machine running other jobs) from naming a knee alone.
	RunToRun = 0.03
	// Confidence is the two-sided coverage of the intervals the rule reports.
	Confidence = 0.80
	// z is the standard normal quantile of (1+Confidence)/2.
	z = 1.2815515655446004
)

// Point is one valid level of a curve.
type Point struct {
	X    float64 // offered concurrency, or rate
	TokS float64 // throughput (output tokens/s); must be positive to count
	// RelSE is the level's own relative standard error of TokS (from resampling
	// within it, or from the spread of its measurements); 0: unknown.
	RelSE float64
	// Measurements is how many times the point was measured (repeats, re-measures);
	// 0 counts as 1.
	Measurements int
}

// Gain is a gain per doubling with its interval at Confidence.
type Gain struct {
	Value, Low, High float64
}

func (g Gain) String() string {
	return fmt.Sprintf("%s per doubling (%.0f%% interval %s to %s)", pct(g.Value), 100*Confidence, pct(g.Low), pct(g.High))
}

// Drop is a level whose throughput is significantly below the level before it.
type Drop struct {
	From, To         float64 // the levels
	FromTokS, ToTokS float64
	// Confirmed is true when the lower level was measured more than once: the drop
	// is real and counts; otherwise it is interference and left out of the knee.
	Confirmed bool
}

// Judgement is the rule's verdict on a curve.
type Judgement struct {
	// Found is true when a knee is named; Knee is its level.
	Found bool
	Knee  float64
	// Plateau is the fitted gain per doubling from the knee on (when Found), or
	// over the highest two levels (when not).
	Plateau Gain
	// Levels is how many levels the judgement used (drops left out).
	Levels int
	// Rising is true when the curve still rises significantly at its top: the
	// gain over the highest two levels is significantly above the threshold.
	Rising bool
	// Drops are the significant drops between neighbouring levels.
	Drops []Drop
	// Why says it in words: the evidence for the knee, or why none is named.
	Why string
}

// Unconfirmed are the drops not yet measured again: the levels a search should
// re-measure.
func (j Judgement) Unconfirmed() []Drop {
	var out []Drop
	for _, d := range j.Drops {
		if !d.Confirmed {
			out = append(out, d)
		}
	}
	return out
}

// sigma is a point's relative standard error as the rule uses it.
func sigma(p Point) float64 {
	n := max(p.Measurements, 1)
	return math.Max(p.RelSE, RunToRun/math.Sqrt(float64(n)))
}

// PairGain is the gain per doubling from a to b (a.X < b.X) with its interval.
func PairGain(a, b Point) Gain {
	du := math.Log2(b.X / a.X)
	d := math.Log(b.TokS / a.TokS)
	sd := math.Hypot(sigma(a), sigma(b))
	return Gain{Value: math.Expm1(d / du), Low: math.Expm1((d - z*sd) / du), High: math.Expm1((d + z*sd) / du)}
}

// Judge applies the rule to pts (any order; points with X or TokS ≤ 0 are left
// out) with threshold, the gain per doubling below which the curve is flat.
func Judge(pts []Point, threshold float64) Judgement {
	var ps []Point
	for _, p := range pts {
		if p.X > 0 && p.TokS > 0 && !math.IsInf(p.TokS, 0) && !math.IsNaN(p.TokS) {
			ps = append(ps, p)
		}
	}
	slices.SortStableFunc(ps, func(a, b Point) int { return cmp(a.X, b.X) })
	var j Judgement
	// Drops between neighbours; an unconfirmed one leaves its level out.
	kept := ps[:0:0]
	for _, p := range ps {
		if len(kept) > 0 {
			prev := kept[len(kept)-1]
			d := math.Log(p.TokS / prev.TokS)
			if d+z*math.Hypot(sigma(prev), sigma(p)) < 0 {
				drop := Drop{From: prev.X, To: p.X, FromTokS: prev.TokS, ToTokS: p.TokS, Confirmed: max(p.Measurements, 1) > 1}
				j.Drops = append(j.Drops, drop)
				if !drop.Confirmed {
					continue
				}
			}
		}
		kept = append(kept, p)
	}
	ps = kept
	j.Levels = len(ps)
	if len(ps) < MinLevels {
		j.Why = fmt.Sprintf("%d valid level%s: a knee needs at least %d", len(ps), plural(len(ps)), MinLevels)
		if len(j.Unconfirmed()) > 0 {
			j.Why += " (" + dropWords(j.Unconfirmed()) + ")"
		}
		return j
	}
	for i := 0; i+1 < len(ps); i++ {
		g := fitGain(ps[i:])
		if g.High >= threshold || resurges(ps[i], ps[i+1:], threshold) {
			continue
		}
		j.Found, j.Knee, j.Plateau = true, ps[i].X, g
		j.Why = fmt.Sprintf("from %s (%.0f tok/s) to %s (%.0f tok/s) throughput gains %s, below %s (a line fitted over %d levels)",
			fmtX(ps[i].X), ps[i].TokS, fmtX(ps[len(ps)-1].X), ps[len(ps)-1].TokS, g, pct(threshold), len(ps)-i)
		break
	}
	if !j.Found {
		top := fitGain(ps[len(ps)-2:])
		j.Plateau = top
		j.Rising = top.Low >= threshold
		if j.Rising {
			j.Why = fmt.Sprintf("throughput still rises at the top: %s from %s to %s, above %s", top, fmtX(ps[len(ps)-2].X), fmtX(ps[len(ps)-1].X), pct(threshold))
		} else {
			j.Why = fmt.Sprintf("no level from which throughput is significantly flat: at the top it gains %s from %s to %s, not significantly below %s; more levels above, or repeats, would tell",
				top, fmtX(ps[len(ps)-2].X), fmtX(ps[len(ps)-1].X), pct(threshold))
		}
	}
	if len(j.Unconfirmed()) > 0 {
		j.Why += "; " + dropWords(j.Unconfirmed())
	}
	return j
}

// resurges reports whether a level above base lies significantly above the
// threshold's growth from base: a pause in the curve, not a plateau.
func resurges(base Point, above []Point, threshold float64) bool {
	for _, p := range above {
		if PairGain(base, p).Low > threshold {
			return true
		}
	}
	return false
}

// fitGain is the gain per doubling of the weighted least-squares line through
// (log2 X, ln TokS), weights 1/σ², with its interval: the slope b is the log
// gain per doubling, its standard error 1/√Σw(u−ū)².
func fitGain(ps []Point) Gain {
	var sw, su, sy float64
	for _, p := range ps {
		w := 1 / (sigma(p) * sigma(p))
		sw += w
		su += w * math.Log2(p.X)
		sy += w * math.Log(p.TokS)
	}
	ub, yb := su/sw, sy/sw
	var suu, suy float64
	for _, p := range ps {
		w := 1 / (sigma(p) * sigma(p))
		du := math.Log2(p.X) - ub
		suu += w * du * du
		suy += w * du * (math.Log(p.TokS) - yb)
	}
	b := suy / suu
	se := 1 / math.Sqrt(suu)
	return Gain{Value: math.Expm1(b), Low: math.Expm1(b - z*se), High: math.Expm1(b + z*se)}
}

func dropWords(ds []Drop) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("throughput fell from %.0f tok/s at %s to %.0f at %s, more than noise: interference until measured again, left out",
			d.FromTokS, fmtX(d.From), d.ToTokS, fmtX(d.To)))
	}
	return strings.Join(parts, "; ")
}

func pct(f float64) string {
	s := fmt.Sprintf("%.1f%%", 100*f)
	s = strings.Replace(s, ".0%", "%", 1)
	if s == "-0%" {
		return "0%"
	}
	return s
}

func fmtX(x float64) string { return fmt.Sprintf("%g", x) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func cmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
