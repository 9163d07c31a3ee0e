package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// A run's criteria: one answer per run. A search recorded with SLOs, a knee
// threshold or the knee off stores them in the trace (plan.search); the analysis
// and the report judge the run by them unless the analysis is given its own, and
// where the analysis answers otherwise than the search did, it says so and why.

// runCriteria applies the criteria the recording stored where the options set
// none, and says what the run is judged by. Each criterion is taken on its own:
// SLOs given to the analysis replace the stored SLOs, the knee the stored knee.
func runCriteria(opt Options, plan trace.Plan) (Options, *Criteria) {
	s := plan.Search
	stored := false
	var notes []string
	given := opt.Knee != 0 || !opt.SLO.none() || opt.MaxErrors != 0
	maxErrors, errorsOn := runMaxErrors(opt, plan)
	if opt.MaxErrors == 0 && s != nil && len(s.Criteria) > 0 {
		stored = true
	}
	opt.MaxErrors = -1
	if errorsOn {
		opt.MaxErrors = maxErrors
	}

	if s != nil && opt.SLO.none() && len(s.SLOs) > 0 {
		seen := map[string]bool{}
		for _, t := range s.SLOs {
			v, p := t.Seconds, t.Percentile
			target, pct, ok := opt.SLO.fields(t.Metric)
			if !ok {
				notes = append(notes, fmt.Sprintf("the search's %s %s target is not a ceiling of the analysis", t.Metric, PercentileName(p)))
				continue
			}
			if seen[t.Metric] {
				notes = append(notes, fmt.Sprintf("the search's second %s target (%s ≤ %s) is not applied: the analysis holds one per latency", t.Metric, PercentileName(p), fmtSeconds(v)))
				continue
			}
			seen[t.Metric] = true
			*target, *pct = &v, p
			if !isSummaryPercentile(p) && !containsFloat(opt.Percentiles, p) {
				opt.Percentiles = append(opt.Percentiles, p)
			}
		}
		stored = true
	}
	if s != nil && opt.Knee == 0 && s.Knee != nil {
		opt.Knee = *s.Knee
		if *s.Knee == 0 {
			opt.Knee = -1
		}
		stored = true
	}
	from := "defaults"
	switch {
	case given:
		from = "options"
	case stored:
		from = "recording"
	}
	c := &Criteria{From: from}
	words := []string{}
	if g, on := opt.kneeGain(); on {
		c.Knee = ptr(g)
		words = append(words, fmt.Sprintf("knee below %s gain per doubling", pctText(g)))
	} else {
		words = append(words, "knee off")
	}
	if errorsOn {
		c.MaxErrors = ptr(maxErrors)
		words = append(words, fmt.Sprintf("errors ≤ %s of requests", pctText(maxErrors)))
	} else {
		words = append(words, "errors off")
	}
	for _, name := range []string{"TTFT", "TPOT", "E2E"} {
		if t := sloTargetPtr(opt.SLO, name); t != nil {
			words = append(words, fmt.Sprintf("%s %s ≤ %s", name, PercentileName(opt.SLO.percentile(name)), fmtSeconds(*t)))
		}
	}
	if opt.SLO.none() {
		words = append(words, "no latency targets")
	}
	switch from {
	case "recording":
		c.Text = "judged by the recording's own criteria: " + strings.Join(words, "; ") + " (--knee and --slo-* override)"
	case "options":
		c.Text = "judged by: " + strings.Join(words, "; ")
		if stored {
			c.Text += " (as given; the rest as the recording's search was judged)"
		}
	default:
		c.Text = "judged by the defaults: " + strings.Join(words, "; ")
	}
	if len(notes) > 0 {
		c.Text += "; " + strings.Join(notes, "; ")
	}
	return opt, c
}

// fields says where s holds the target and the percentile of one latency metric,
// named as search criteria and stored search plans name them ("ttft", "tpot",
// "e2e"); ok is false for a metric the analysis has no target of.
func (s *SLO) fields(metric string) (target **float64, pct *float64, ok bool) {
	switch metric {
	case "ttft":
		return &s.TTFT, &s.TTFTP, true
	case "tpot":
		return &s.TPOT, &s.TPOTP, true
	case "e2e":
		return &s.E2E, &s.E2EP, true
	}
	return nil, nil, false
}

func sloTargetPtr(s SLO, name string) *float64 {
	switch name {
	case "TTFT":
		return s.TTFT
	case "TPOT":
		return s.TPOT
	}
	return s.E2E
}

func isSummaryPercentile(p float64) bool {
	for _, q := range summaryPercentiles {
		if q == p {
			return true
		}
	}
	return false
}

func containsFloat(v []float64, x float64) bool {
	for _, a := range v {
		if a == x {
			return true
		}
	}
	return false
}

func pctText(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", 100*f), "0"), ".") + "%"
}

// searchAgreement compares the realistic ceiling with the answer of the run's own
// search: "" when they agree (within the search's bracket), else the sentence that
// says which answers what and why.
func searchAgreement(r *Run) string {
	p := r.Search
	if p == nil || !p.Done || p.Lo <= 0 {
		return ""
	}
	got := r.Ceiling.Concurrency
	hi := p.Hi
	if hi <= 0 {
		hi = p.Lo
	}
	if got != nil && *got >= p.Lo && *got <= math.Max(p.Lo, hi-1) {
		return ""
	}
	analysis := "no ceiling in the tested range"
	if got != nil {
		analysis = fmt.Sprintf("%s (%s)", trimFloat(*got), r.Ceiling.Binding)
	}
	why := "it judges every level the search ran together, by the same criteria"
	switch {
	case r.Ceiling.Binding == "kv" || r.Ceiling.Binding == "batch":
		why = fmt.Sprintf("the %s limit is not a criterion of the search; the analysis reads it from the server and the levels", r.Ceiling.Binding)
	case r.Criteria != nil && r.Criteria.From == "options":
		why = "the analysis was given other criteria than the search (" + r.Criteria.Text + ")"
	}
	return fmt.Sprintf("the search answered %s, bound by %s; this analysis answers %s: %s", trimFloat(p.Lo), p.Bound, analysis, why)
}
