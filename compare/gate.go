package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultThreshold is the practical threshold: a worsening smaller than 5% is
// not a regression however significant.
const DefaultThreshold = 0.05

// DefaultGate is the gated set: what can fail a comparison. One figure per thing
// a deployment is bought for, so that the family stays small and the correction
// mild: the realistic ceiling and output throughput (capacity), goodput (the
// capacity that meets the SLOs, when SLOs are given), TTFT p99 (the wait a user
// feels under load: queueing shows there first), TPOT p50 (the decode speed of a
// typical request: a slower kernel or a larger batch shows there), and the error
// rate (requests that fail). The rest are shown and tested each alone, and never
// fail the comparison: request/s and E2E follow from the gated ones, TTFT p50
// moves with TTFT p99, and TPOT p99 is the tail of a per-request mean, noisy on
// the few requests a level holds.
var DefaultGate = []string{"ceiling", "output_tok_s", "goodput_request_s", "ttft_p99_s", "tpot_p50_s", "error_rate"}

// Metrics are every metric name compare knows, in display order.
func Metrics() []string {
	out := []string{"ceiling"}
	for _, m := range ratioMetrics {
		out = append(out, m.name)
	}
	return append(out, "error_rate")
}

// powerTarget is the power the "needed" figures are sized for.
const powerTarget = 0.8

// Options control a comparison. The zero value uses the defaults.
type Options struct {
	// Threshold is the practical threshold (0 = DefaultThreshold).
	Threshold float64
	// Gate lists the gated metrics (nil = DefaultGate).
	Gate []string
}

// Compare compares a candidate's runs with a baseline's (one run each, or
// several repeats of one configuration per side). A *NotComparableError says why
// they cannot be compared.
func Compare(base, cand []analyze.Run, opt Options) (*Result, error) {
	threshold := opt.Threshold
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	if threshold < 0 || threshold >= 1 || math.IsNaN(threshold) {
		return nil, fmt.Errorf("threshold must be in (0, 1), got %g", threshold)
	}
	gate := opt.Gate
	if gate == nil {
		gate = DefaultGate
	}
	for _, g := range gate {
		if !slices.Contains(Metrics(), g) {
			return nil, fmt.Errorf("gate: unknown metric %q (known: %s)", g, strings.Join(Metrics(), ", "))
		}
	}
	diffs, err := checkComparable(base, cand)
	if err != nil {
		return nil, err
	}
	bp, cp := points(base), points(cand)
	shared, unmatched := matchLevels(bp, cp)
	if len(shared) == 0 {
		return nil, notComparable("the runs share no level (baseline %s; candidate %s): record the candidate at the baseline's concurrencies or rates",
			keysText(bp), keysText(cp))
	}
	res := &Result{
		Schema: Schema, Baseline: sideInfo(base), Candidate: sideInfo(cand),
		Method: methodBoot, Threshold: threshold, Alpha: alpha, Correction: "holm",
		Gated: slices.Clone(gate), Differences: diffs, Unmatched: unmatched,
		Regressions: []Finding{}, Improvements: []Finding{}, Inconclusive: []Finding{},
	}
	if res.Differences == nil {
		res.Differences = []string{}
	}
	for _, k := range shared {
		ld := LevelDiff{Label: k.label(), Concurrency: k.concurrency, Rate: k.rate}
		for _, m := range ratioMetrics {
			d := diffRatio(m, bp[k], cp[k])
			if d.Method == methodRepeats {
				res.Method = methodRepeats
			}
			ld.Metrics = append(ld.Metrics, d)
		}
		ld.Metrics = append(ld.Metrics, diffErrorRate(bp[k], cp[k]))
		res.Levels = append(res.Levels, ld)
	}
	res.Ceiling = diffCeiling(base, cand)

	// The family: every gated test that has a p-value.
	type test struct {
		where string
		d     *MetricDiff
	}
	var family []test
	var untested []string
	visit := func(where string, d *MetricDiff) {
		d.Gated = slices.Contains(gate, d.Metric)
		if d.Gated && d.P != nil {
			family = append(family, test{where, d})
		} else if d.Gated && d.Baseline != nil {
			untested = append(untested, d.Metric+" at "+where+": "+d.Note)
		}
	}
	if res.Ceiling != nil {
		visit("ceiling", &res.Ceiling.Diff)
	}
	for i := range res.Levels {
		for j := range res.Levels[i].Metrics {
			visit(res.Levels[i].Label, &res.Levels[i].Metrics[j])
		}
	}
	if len(family) == 0 {
		why := "no gated metric was measured at a shared level"
		if len(untested) > 0 {
			why = "no gated metric could be tested: " + strings.Join(untested, "; ")
		}
		return nil, notComparable("%s", why)
	}
	ps := make([]float64, len(family))
	for i, t := range family {
		ps[i] = *t.d.P
	}
	for i, p := range holm(ps) {
		family[i].d.PAdjusted = f64(p)
	}

	// Verdicts: gated tests at their Holm-adjusted p, the others alone.
	zNeed := distuv.UnitNormal.Quantile(1-alpha/(2*float64(len(family)))) + distuv.UnitNormal.Quantile(powerTarget)
	var need []needFor
	judge := func(where string, d *MetricDiff) {
		if d.P == nil {
			return
		}
		p := *d.P
		if d.Gated {
			p = *d.PAdjusted
		}
		worse := d.Change != nil && (*d.Change < 0) == d.higherBetter && *d.Change != 0
		if d.Metric == "error_rate" {
			worse = *d.Change > 0
		}
		if d.Metric == "ceiling" && d.Change == nil && d.Baseline != d.Candidate {
			worse = d.Candidate != nil // a ceiling found where the baseline had none
		}
		switch {
		case p < alpha && worse:
			d.Verdict = Worse
		case p < alpha:
			d.Verdict = Better
		default:
			d.Verdict = NoDifference
		}
		if !d.Gated {
			return
		}
		f := Finding{Metric: d.Metric, Where: where, Text: findingText(where, d)}
		switch {
		case d.Verdict == Worse && beyond(d, threshold):
			d.Regression = true
			res.Regressions = append(res.Regressions, f)
		case d.Verdict == Better:
			res.Improvements = append(res.Improvements, f)
		case d.Verdict == NoDifference && d.Metric != "error_rate" && reachesBeyond(d, threshold):
			// The error rate is left out: with no error on either side its
			// interval still spans a few points on a few dozen requests, and
			// every comparison would read as inconclusive.
			res.Inconclusive = append(res.Inconclusive, f)
			need = append(need, needOf(d, threshold, zNeed))
		}
	}
	if res.Ceiling != nil {
		judge("ceiling", &res.Ceiling.Diff)
	}
	for i := range res.Levels {
		for j := range res.Levels[i].Metrics {
			judge(res.Levels[i].Label, &res.Levels[i].Metrics[j])
		}
	}
	res.Regression = len(res.Regressions) > 0
	res.Needed = needed(need, res.Method)
	res.Verdict = verdictText(res, len(family))
	return res, nil
}

func keysText(m map[pointKey][]unit) string {
	var ls []string
	for k := range m {
		ls = append(ls, k.label())
	}
	sort.Strings(ls)
	return strings.Join(ls, ", ")
}

func sideInfo(runs []analyze.Run) SideInfo {
	s := SideInfo{Runs: len(runs), Sources: []string{}}
	for i := range runs {
		s.Sources = append(s.Sources, runs[i].Source)
	}
	if len(runs) > 0 {
		s.Model = runs[0].Model
		if info, err := runInfo(&runs[0]); err == nil {
			s.Server, s.GPU = serverText(&runs[0], info), gpuText(info)
		}
	}
	return s
}

// holm returns Holm's step-down adjusted p-values: the k-th smallest p times
// (m − k + 1), made monotone, capped at 1. Rejecting where the adjusted p is
// below alpha holds the chance of any false rejection to alpha whatever the
// dependence between the tests.
func holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, m)
	run := 0.0
	for k, i := range idx {
		run = math.Max(run, math.Min(1, float64(m-k)*ps[i]))
		out[i] = run
	}
	return out
}

// beyond reports whether a worsening is beyond the threshold: a ratio metric by
// more than the threshold, the error rate lowering the success rate by more,
// the ceiling lower by more (or found where the baseline found none).
func beyond(d *MetricDiff, threshold float64) bool {
	switch {
	case d.Metric == "error_rate":
		return *d.Change > threshold*(1-*d.Baseline)
	case d.Change == nil:
		return true
	case d.higherBetter:
		return *d.Change < -threshold
	default:
		return *d.Change > threshold
	}
}

// reachesBeyond reports whether an untold difference's interval reaches a
// worsening beyond the threshold: a regression of that size is not ruled out.
func reachesBeyond(d *MetricDiff, threshold float64) bool {
	switch {
	case d.Low == nil || d.High == nil:
		return false
	case d.higherBetter:
		return *d.Low < -threshold
	default:
		return *d.High > threshold
	}
}

// needFor is how many times more data one inconclusive test needs to detect a
// worsening of the threshold's size with powerTarget power at the Bonferroni
// level of the family (Holm's first step): (se ÷ se needed)².
type needFor struct {
	factor float64
	n      int // requests per level now (the larger side)
	units  int // repeats per side now (the larger side)
}

func needOf(d *MetricDiff, threshold, z float64) needFor {
	effect := math.Log1p(threshold) // the log ratio of a latency threshold worse
	if d.higherBetter {
		effect = -math.Log1p(-threshold)
	}
	f := math.Pow(d.se*z/effect, 2)
	return needFor{factor: f, n: max(d.n[0], d.n[1]), units: max(d.units[0], d.units[1])}
}

func needed(ns []needFor, method string) *Needed {
	if len(ns) == 0 {
		return nil
	}
	worst := ns[0]
	for _, n := range ns[1:] {
		if n.factor > worst.factor {
			worst = n
		}
	}
	f := math.Max(worst.factor, 1)
	nd := &Needed{Factor: f}
	if method == methodRepeats && worst.units > 1 {
		nd.RepeatsPerSide = int(math.Ceil(f * float64(worst.units)))
		nd.Text = fmt.Sprintf("about %d repeats per side (%.1f× the data) would tell a difference of the threshold's size with %.0f%% power",
			nd.RepeatsPerSide, f, 100*powerTarget)
		return nd
	}
	nd.RequestsPerLevel = int(math.Ceil(f * float64(worst.n)))
	nd.RepeatsPerSide = int(math.Ceil(f))
	nd.Text = fmt.Sprintf("about %d requests per level (%.1f× the data), or %d repeats per side, would tell a difference of the threshold's size with %.0f%% power",
		nd.RequestsPerLevel, f, max(nd.RepeatsPerSide, 2), 100*powerTarget)
	return nd
}

// findingText is "output_tok_s at c=8: 812 → 731, −9.9% (95% CI −12.0% to −7.8%), p_holm 0.0003".
func findingText(where string, d *MetricDiff) string {
	s := fmt.Sprintf("%s at %s: %s → %s", d.Metric, where, valueText(d.Metric, d.Baseline), valueText(d.Metric, d.Candidate))
	if c := changeText(d); c != "" {
		s += ", " + c
	}
	if d.Low != nil {
		s += fmt.Sprintf(" (95%% CI %s to %s)", signedText(d.Metric, *d.Low), signedText(d.Metric, *d.High))
	}
	if d.PAdjusted != nil {
		s += ", p_holm " + pText(*d.PAdjusted)
	}
	return s
}

// verdictText is the one-line answer.
func verdictText(r *Result, tests int) string {
	var s string
	if r.Regression {
		names := make([]string, len(r.Regressions))
		for i, f := range r.Regressions {
			names[i] = f.Metric + " at " + f.Where
		}
		s = "REGRESSION: " + strings.Join(names, ", ")
	} else {
		s = "no regression"
	}
	s += fmt.Sprintf(" (%d gated tests, Holm-corrected at %.0f%%, threshold %.0f%%)", tests, 100*alpha, 100*r.Threshold)
	if c := r.CeilingText(); c != "" {
		s += "; " + c
	}
	if !r.Regression && len(r.Inconclusive) > 0 {
		s += fmt.Sprintf("; inconclusive for %d gated tests", len(r.Inconclusive))
	}
	return s
}

// CeilingText is "ceiling 24 → 32, +33%, significant": the realistic ceilings and
// whether they differ, "" when neither side found one.
func (r *Result) CeilingText() string {
	c := r.Ceiling
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("ceiling %s → %s", ceilingWord(c.Baseline), ceilingWord(c.Candidate))
	if c.Diff.Change != nil {
		s += ", " + percent(*c.Diff.Change)
	}
	switch c.Diff.Verdict {
	case Better, Worse:
		s += ", significant"
	case NoDifference:
		s += ", not significant"
	default:
		s += ", not tested"
	}
	return s
}
