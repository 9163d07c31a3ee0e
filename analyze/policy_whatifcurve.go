package analyze

import (
	"fmt"
	"math"
	"sort"

	"github.com/ceiling-llm/ceiling/prediction"
)

// The whole-curve what-if: every measured level predicted under a change, at the
// same concurrency, each figure with an interval.
//
// Model. Each measured level ran at some share of its roofline with prefill
// (capacity.Roofline.AtWorkload at its decode batch and request lengths): its
// output tok/s ÷ the roofline's, and its per-user speed ÷ the roofline's. The
// prediction at that concurrency is the same share (times the vendor efficiency
// where the change crosses from NVIDIA to AMD or back) of the changed deployment's
// roofline at the batch the level would decode: the measured decode concurrency,
// capped by what the changed KV cache holds. The share is carried on the step
// less a fixed per-step overhead t0 (CPU scheduling, launches, sampling; more per
// further pipeline stage), which the predicted step pays again: measured step =
// roofline step ÷ e + t0, predicted step = changed roofline step ÷ e + t0'
// (carryStep, prediction.StepOverhead), so
// a small batch moved onto a faster GPU gains less than the rooflines' ratio. Longer prompts cost prefill FLOPs and
// KV reads in the roofline, so they never raise a prediction. TPOT is the measured
// TPOT scaled by the per-user speed's change; TTFT the measured TTFT scaled by the
// prefill time at the peaks (capacity.Roofline.PrefillS: the prompt's matmul FLOPs
// and its causal attention's, which grow with the prompt's square).
//
// Intervals. The share a deployment reaches moves with the GPU, the precision, the
// engine and the request lengths in ways the roofline does not know. Each predicted
// figure v carries [v·e^−q, v·e^q], q calibrated per kind of change on held-out
// errors of public measurements (prediction.Calibration, split conformal at 80%
// nominal coverage; docs/validation.md scores it leave-one-deployment-out), widened
// by the level's 95% bootstrap interval of throughput where it has one. TPOT's
// interval follows the per-user speed's; TTFT has its own, calibrated on the
// public TTFT errors (the throughput's, inverted, for a kind without any).
//
// Beyond the model. A level whose concurrency exceeds what the changed KV cache
// holds is marked, not predicted: its requests would queue for KV, which the
// roofline does not model. A level that was itself invalid has no share to carry.

// IntervalMethod states how the what-if's intervals are made, for the calibration
// the prediction uses.
func IntervalMethod(c prediction.Calibration) string {
	s := c.String() + "; widened by the level's 95% bootstrap throughput interval where it has one"
	if t := c.TTFT; t != nil {
		lo, hi := t.Bounds(1)
		s += fmt.Sprintf("; TTFT has its own: ×%.2f to ×%.2f, from %d public TTFT errors", lo, hi, t.Errors)
		if h := t.HeldOutText(); h != "" {
			s += ", " + h
		}
		s += ": a TTFT under load is mostly scheduling and queueing, which the prefill time the model scales does not know"
	}
	return s
}

// queueingTTFT is how many times the sweep's unloaded TTFT (at its lowest valid
// concurrency) a level's TTFT may be before it counts as mostly queueing.
const queueingTTFT = 3.0

// PredictCurve predicts every level of m.Points under the change.
func PredictCurve(m CurveModel) []LevelPrediction {
	if m.Interval.Kind == "" {
		m.Interval = prediction.IntervalFor()
	}
	if m.Efficiency <= 0 {
		m.Efficiency = 1
	}
	out := make([]LevelPrediction, 0, len(m.Points))
	shares := make([]float64, len(m.Points))
	baseStep := make([]float64, len(m.Points)) // the measured roofline's step at each level's batch
	for i, p := range m.Points {
		shares[i] = math.NaN()
		if !p.Valid || p.Batch <= 0 || p.OutputTokS <= 0 {
			continue
		}
		roof := m.Base.AtWorkload(p.Batch, m.PromptTokens, m.OutputTokens)
		shares[i], baseStep[i] = p.OutputTokS/roof.TotalTokS, roof.StepS
	}
	prefill := m.Changed.PrefillS(m.ToPrompt) / m.Base.PrefillS(m.PromptTokens)
	var unloaded *float64 // TTFT at the lowest valid concurrency
	for _, p := range m.Points {
		if p.Valid && p.TTFT != nil && *p.TTFT > 0 {
			unloaded = p.TTFT
			break
		}
	}
	for i, p := range m.Points {
		lp := LevelPrediction{Level: p.Level, Concurrency: p.Concurrency, Batch: p.Batch}
		lp.Measured.OutputTokS, lp.Measured.PerUserTokS, lp.Measured.TTFT, lp.Measured.TPOT = p.OutputTokS, p.PerUserTokS, p.TTFT, p.TPOT
		if !math.IsNaN(shares[i]) {
			lp.Measured.Share = shares[i]
		}
		switch {
		case !p.Valid:
			lp.Invalid = true
			lp.Beyond = "the measured level is invalid: no share of the roofline to carry over"
		case math.IsNaN(shares[i]):
			lp.Beyond = "the measured level has no decode batch or throughput"
		case m.KVHolds > 0 && p.Concurrency > m.KVHolds*1.05:
			lp.Beyond = fmt.Sprintf("beyond the model: the changed KV cache holds ~%.0f requests, so at %s requests queue for KV, which the roofline does not model", m.KVHolds, num(p.Concurrency))
		}
		if lp.Beyond != "" {
			out = append(out, lp)
			continue
		}
		batch := p.Batch
		if m.KVHolds > 0 && batch > m.KVHolds {
			batch = m.KVHolds
		}
		lp.Batch = batch
		// The measured step (the batch over the output tok/s) less the fixed
		// overhead, scaled by the rooflines' steps, plus the overhead (carryStep):
		// without an overhead, the measured share times the changed roofline.
		roof := m.Changed.AtWorkload(batch, m.ToPrompt, m.ToOutput)
		v := 0.0
		if st := carryStep(p.Batch/p.OutputTokS, baseStep[i], roof.StepS, stepOverheadS(m.StepOverhead, m.Base), stepOverheadS(m.StepOverhead, m.Changed)); st > 0 {
			v = m.Efficiency * batch / st
		}
		ciLo, ciHi := 1.0, 1.0
		if p.CILow != nil && p.CIHigh != nil && p.OutputTokS > 0 {
			ciLo, ciHi = math.Min(1, *p.CILow/p.OutputTokS), math.Max(1, *p.CIHigh/p.OutputTokS)
		}
		lo, hi := m.Interval.Bounds(v)
		lp.OutputTokS = &Range{Value: v, Low: lo * ciLo, High: hi * ciHi}
		if st := carryStep(1/math.Max(p.PerUserTokS, 0), baseStep[i], roof.StepS, stepOverheadS(m.StepOverhead, m.Base), stepOverheadS(m.StepOverhead, m.Changed)); p.PerUserTokS > 0 && st > 0 {
			u := m.Efficiency / st
			ulo, uhi := m.Interval.User().Bounds(u)
			lp.PerUserTokS = &Range{Value: u, Low: ulo, High: uhi}
			if p.TPOT != nil && p.PerUserTokS > 0 {
				t := *p.TPOT * p.PerUserTokS
				lp.TPOT = &Range{Value: t / u, Low: t / lp.PerUserTokS.High, High: t / lp.PerUserTokS.Low}
			}
		}
		if p.TTFT != nil && unloaded != nil && *p.TTFT > queueingTTFT**unloaded {
			lp.TTFTBeyond = fmt.Sprintf("TTFT not predicted: the measured %.0f ms is mostly queueing (%.1f× the %.0f ms at the lowest concurrency), which the model does not carry over",
				*p.TTFT*1000, *p.TTFT / *unloaded, *unloaded*1000)
		} else if p.TTFT != nil && !math.IsNaN(prefill) && !math.IsInf(prefill, 0) && v > 0 {
			t := *p.TTFT * prefill
			if m.Interval.TTFT != nil {
				// Its own interval, calibrated on public TTFT errors.
				tlo, thi := m.Interval.TTFT.Bounds(t)
				lp.TTFT = &Range{Value: t, Low: tlo, High: thi}
			} else {
				// No public TTFT of this kind: it moves against the efficiency, so
				// its interval is the throughput's, inverted.
				lp.TTFT = &Range{Value: t, Low: t * v / lp.OutputTokS.High, High: t * v / lp.OutputTokS.Low}
			}
		}
		out = append(out, lp)
	}
	atSameSpeed(out)
	return out
}

// atSameSpeed fills AtMeasuredSpeed: the predicted throughput where the predicted
// curve's per-user speed equals the measured level's, interpolated linearly
// between the two predicted levels around it.
func atSameSpeed(levels []LevelPrediction) {
	type pt struct{ u, x float64 }
	var curve []pt
	for _, l := range levels {
		if l.OutputTokS != nil && l.PerUserTokS != nil {
			curve = append(curve, pt{l.PerUserTokS.Value, l.OutputTokS.Value})
		}
	}
	sort.Slice(curve, func(i, j int) bool { return curve[i].u < curve[j].u })
	for i := range levels {
		u := levels[i].Measured.PerUserTokS
		if u <= 0 || len(curve) == 0 || u < curve[0].u || u > curve[len(curve)-1].u {
			continue
		}
		for j := range curve {
			if curve[j].u == u {
				levels[i].AtMeasuredSpeed = pf(curve[j].x)
				break
			}
			if j > 0 && curve[j-1].u < u && u < curve[j].u {
				w := (u - curve[j-1].u) / (curve[j].u - curve[j-1].u)
				levels[i].AtMeasuredSpeed = pf(curve[j-1].x + w*(curve[j].x-curve[j-1].x))
				break
			}
		}
	}
}

// curveFromRun is a run's levels as the what-if reads them.
func curveFromRun(r *Run) []CurvePoint {
	var pts []CurvePoint
	for _, l := range r.Levels {
		if l.Rate > 0 {
			continue // open-loop levels have no concurrency to compare at
		}
		p := CurvePoint{Level: l.Level, Concurrency: float64(l.Concurrency), Batch: l.DecodeConcurrency,
			OutputTokS: l.OutputTokS, PerUserTokS: l.PerUserTokS, TTFT: l.TTFT.P50, TPOT: l.TPOT.P50, Valid: l.Valid}
		if l.CI != nil && l.CI.OutputTokS != nil { // no interval where the window was too short
			p.CILow, p.CIHigh = pf(l.CI.OutputTokS.Low), pf(l.CI.OutputTokS.High)
		}
		pts = append(pts, p)
	}
	return pts
}
