package analyze

import (
	"fmt"
)

// minLevels is the fewest levels a knee or a curve fit can be trusted from.
const minLevels = 4

// modelDisagreement is how far the modelled KV capacity may stray from what the server
// measured before the analysis says so: beyond 25% an input (utilization, weights,
// reserve, dtype) is probably wrong.
const modelDisagreement = 0.25

// modelRun fills r.Capacity, r.Fit, r.Ceilings, r.Ceiling and appends its warnings
// (fewer than 4 levels, no plateau reached...) given r.Levels already computed.
func modelRun(r *Run, facts serverFacts, work workloadTokens, opt Options) error {
	opt, reserveFallback := runReserve(opt, facts.Kind)
	capacity, warnings, err := buildCapacity(facts, work, r.Levels, opt)
	if err != nil {
		return err
	}
	noteReserveFallback(capacity, reserveFallback)
	r.Capacity = capacity
	r.Warnings = append(r.Warnings, warnings...)

	// Invalid levels (policy_validity.go) are shown but make no ceiling and no fit.
	// Repeats of one point (--repeat) count once, pooled (stats_repeats.go).
	levels := poolRepeats(validLevels(r.Levels))
	pts := throughputPoints(levels)
	if len(pts) >= 3 {
		if f, err := fitUSL(pts); err == nil {
			r.Fit.USL = f
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("no USL fit: %v", err))
		}
	}

	evidence := map[string][]string{}
	kvV, kvEv, kvNote := kvCeiling(capacity, r.Levels)
	if kvV != nil {
		r.Ceilings.KV = kvV
		evidence["kv"] = kvEv
	}
	if v, ev, ok := batchCeiling(levels); ok {
		v, ev = slotBatch(v, ev, facts.Slots)
		r.Ceilings.Batch = &v
		evidence["batch"] = []string{ev}
	}
	if kvNote != "" {
		evidence["batch"] = append(evidence["batch"], kvNote)
	}
	if gain, on := opt.kneeGain(); on {
		v, ev, ok, drops := kneeCeiling(levels, gain)
		if ok {
			r.Ceilings.Knee = &v
		}
		evidence["knee"] = ev
		r.Warnings = append(r.Warnings, drops...)
	}
	if f := r.Fit.USL; f != nil && f.NMax != nil {
		note := "the knee comes from the data, not from the fit"
		if k := r.Ceilings.Knee; k != nil && *f.NMax > *k {
			note = "on plateau-shaped curves that overshoots, so the knee comes from the data"
		}
		evidence["knee"] = append(evidence["knee"], fmt.Sprintf("the USL fit (σ=%.4f, κ=%.2e, R²=%.3f) puts its peak at %.0f; %s",
			f.Sigma, f.Kappa, f.R2, *f.NMax, note))
	}
	if opt.MaxErrors > 0 {
		if v, ev, found, below := errorCeiling(r.Levels, levels, opt.MaxErrors); found {
			r.Ceilings.Errors = &v
			evidence["errors"] = []string{ev}
			if below {
				r.Warnings = append(r.Warnings, "the errors criterion fails at every tested level: "+ev)
			}
		}
	}
	sloV, sloEv, sloFound, sloBelow := sloCeiling(levels, opt.SLO)
	if sloFound {
		r.Ceilings.SLO = &sloV
		evidence["slo"] = []string{sloEv}
		if sloBelow {
			r.Warnings = append(r.Warnings, "the SLOs are not met at any tested level: "+sloEv)
		}
	}
	r.Ceiling = realistic(confirmed(r.Ceilings, levels, r.Levels), evidence)
	if s := searchAgreement(r); s != "" {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, s)
		r.Warnings = append(r.Warnings, s)
	}
	r.Ceiling.Prediction = kvPrediction(r.Ceilings, levels, r.Levels)
	if p := r.Ceiling.Prediction; p != nil {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, p.Text)
		r.Warnings = append(r.Warnings, p.Text)
	}
	if len(levels) == 0 && len(r.Levels) > 0 {
		// The KV model alone is a prediction: with no valid level nothing measured
		// confirms it, and naming it the realistic ceiling would present it as one.
		ev := []string{fmt.Sprintf("no level of the sweep is valid (%d of %d invalid): nothing measured locates the ceiling", len(r.Levels), len(r.Levels))}
		if r.Ceilings.KV != nil {
			ev = append(ev, fmt.Sprintf("the KV model alone predicts %.1f concurrent requests: a prediction, not a measurement", *r.Ceilings.KV))
		}
		r.Ceiling = Ceiling{Binding: "none", Evidence: ev}
		if r.Ceilings.KV != nil {
			r.Ceiling.Prediction = &Prediction{Limit: "kv", Concurrency: *r.Ceilings.KV, Text: ev[len(ev)-1]}
		}
	}
	if r.Ceiling.Binding == "none" && sloEv != "" {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, sloEv)
	}

	r.Warnings = append(r.Warnings, ceilingWarnings(r, pts)...)
	repeatRun(r, opt)
	var dw []string
	r.Decision, dw = buildDecision(r, opt)
	r.Warnings = append(r.Warnings, dw...)
	return nil
}

// ceilingWarnings are the warnings about the sweep itself.
// throughputDrop is how far below its peak a higher level's throughput may fall before
// the analysis warns: a plateau wobbles by a few percent, a collapse does not.
const throughputDrop = 0.2

func ceilingWarnings(r *Run, pts []point) []string {
	var w []string
	if n := len(pts); n > 0 && n < minLevels {
		w = append(w, fmt.Sprintf("only %d levels: too few to locate a knee or trust a curve fit (sweep at least %d)", n, minLevels))
	}
	if len(pts) == 0 {
		return w
	}
	top := pts[len(pts)-1].N
	switch {
	case r.Ceilings.Knee != nil || r.Ceilings.Batch != nil:
	case r.Ceilings.Errors != nil || (r.Ceilings.SLO != nil && r.Ceiling.Binding == "slo"):
		// Failed requests or missed latency targets bound it: a throughput still
		// growing past them does not lift the ceiling.
		w = append(w, fmt.Sprintf("no plateau reached in the tested range (up to concurrency %g): throughput and batch were still growing, but the %s bound the ceiling first", top, map[bool]string{true: "failed requests", false: "latency targets"}[r.Ceilings.Errors != nil]))
	default:
		w = append(w, fmt.Sprintf("no plateau reached in the tested range (up to concurrency %g): throughput and batch were still growing, so the ceiling may lie higher", top))
	}
	// A throughput that falls well below its peak at a higher level is not a plateau:
	// the server degraded under overload (preemption, thrashing), or something else
	// competed for it or for the client while that level ran.
	peak := pts[0]
	for _, p := range pts {
		if p.X > peak.X {
			peak = p
		}
	}
	for _, p := range pts {
		if p.N > peak.N && p.X < (1-throughputDrop)*peak.X {
			w = append(w, fmt.Sprintf("throughput falls from %.0f tok/s at concurrency %g to %.0f at %g (%.0f%% less): the server degrades under overload, or something competed with it or the client during that level; levels beyond the peak do not measure capacity",
				peak.X, peak.N, p.X, p.N, 100*(1-p.X/peak.X)))
			break
		}
	}
	if kv := r.Ceilings.KV; kv != nil && *kv > 0 && top > 2**kv {
		w = append(w, fmt.Sprintf("the sweep went to concurrency %g, %.1f× what the KV cache holds at the mean request (%.1f): levels beyond it measure queueing, not serving",
			top, top / *kv, *kv))
	}
	return w
}
