package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/kneerule"
)

// The ceilings of a run: KV cache, server batch, throughput knee and SLO, and the
// realistic ceiling, the lowest of them with the limit that binds.

// tieTolerance is how close two ceilings must be to count as the same limit: within
// 5%, the binding limit named is the cause rather than the symptom (a full KV cache
// caps the batch, which flattens throughput, which breaks the SLOs), so kv beats batch
// beats errors beats slo beats knee.
const tieTolerance = 0.05

// bindingOrder lists the limits cause before symptom.
var bindingOrder = [...]string{"kv", "batch", "errors", "slo", "knee"}

// offered is the concurrency coordinate of a level: its closed-loop target, or for an
// open-loop (rate) level the measured concurrency in the server, decode plus waiting
// (Little's law), since the target there is a rate.
func offered(l Level) float64 {
	if l.Concurrency > 0 {
		return float64(l.Concurrency)
	}
	return l.DecodeConcurrency + l.WaitingConcurrency
}

// sortedLevels returns the levels with a positive offered concurrency, by it.
func sortedLevels(levels []Level) []Level {
	var out []Level
	for _, l := range levels {
		if offered(l) > 0 {
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return offered(out[i]) < offered(out[j]) })
	return out
}

// throughputPoints are (offered concurrency, windowed output tok/s) of the levels.
func throughputPoints(levels []Level) []point {
	var pts []point
	for _, l := range sortedLevels(levels) {
		pts = append(pts, point{offered(l), l.OutputTokS})
	}
	return pts
}

// batchCeiling finds the server's real batch limit, measured: the decode concurrency
// (Little's law) that stops growing while the offered concurrency grows. The plateau
// starts at the lowest level i such that every later closed-loop level keeps decode
// concurrency below D_i·1.1 although one offers at least 1.25·D_i.
//
// The ceiling is expressed, like the others, as an offered concurrency:
//   - If level i still served its requests with about the decode share of the level
//     below (decode concurrency per offered request fell by less than shareDrop), no
//     queue had formed at i: the server batched all it was offered there, and the
//     ceiling is level i's offered concurrency. Decode concurrency itself stays below
//     it because part of each request's time in a slot is prefill, which the client
//     sees as waiting (on a CPU llama.cpp with 256-token prompts, about a quarter).
//   - Otherwise a queue formed at i already (the levels are coarser than the limit),
//     and the ceiling is the plateau's decode concurrency, rounded to whole sequences.
func batchCeiling(levels []Level) (value float64, evidence string, ok bool) {
	// shareDrop is how far the decode share per offered request may fall from one
	// level to the next before it counts as queueing.
	const shareDrop = 0.8
	var ls []Level
	for _, l := range sortedLevels(levels) {
		if l.Concurrency > 0 && l.DecodeConcurrency > 0 {
			ls = append(ls, l)
		}
	}
	share := func(l Level) float64 { return l.DecodeConcurrency / float64(l.Concurrency) }
	for i := 0; i < len(ls)-1; i++ {
		d := ls[i].DecodeConcurrency
		flat, pressed := true, false
		maxD, maxWait := d, ls[i].WaitingConcurrency
		for _, l := range ls[i+1:] {
			if l.DecodeConcurrency >= d*1.1 {
				flat = false
				break
			}
			if float64(l.Concurrency) >= 1.25*d {
				pressed = true
			}
			maxD = math.Max(maxD, l.DecodeConcurrency)
			maxWait = math.Max(maxWait, l.WaitingConcurrency)
		}
		if !flat || !pressed {
			continue
		}
		last := ls[len(ls)-1]
		prevShare := 1.0
		if i > 0 {
			prevShare = share(ls[i-1])
		}
		served := share(ls[i]) >= shareDrop*prevShare
		if served {
			value = float64(ls[i].Concurrency)
		} else {
			value = math.Max(1, math.Round(maxD))
		}
		evidence = fmt.Sprintf("decode concurrency stays at %.2f–%.2f from offered %d to %d while requests wait (up to %.1f waiting)",
			d, maxD, ls[i].Concurrency, last.Concurrency, maxWait)
		if served {
			evidence += fmt.Sprintf(": the server batches the %d it is offered at %d, and no more", ls[i].Concurrency, ls[i].Concurrency)
		} else {
			evidence += fmt.Sprintf(": the server batches at most %g", value)
		}
		return value, evidence, true
	}
	return 0, "", false
}

// kneeCeiling finds the throughput knee with kneerule, the rule the ceiling search
// judges levels by: the lowest level from which a line fitted over it and every
// level above is significantly flatter than gain per doubling, each level's
// throughput carrying its within-level interval or the run-to-run floor, whichever
// is wider; no knee from fewer than kneerule.MinLevels levels, none from a drop
// not measured twice. Kneedle's knee is given as evidence beside it. USL's Nmax is
// not used: on the plateau-shaped curves LLM servers produce it lands far beyond
// the knee. drops are the warnings for drops left out as interference.
func kneeCeiling(levels []Level, gain float64) (value float64, evidence []string, ok bool, drops []string) {
	j := kneerule.Judge(kneePoints(levels), gain)
	evidence = append(evidence, j.Why)
	for _, d := range j.Unconfirmed() {
		drops = append(drops, fmt.Sprintf("throughput falls from %.0f tok/s at concurrency %g to %.0f at %g, more than a level varies between runs: interference (a busy machine or client) until that level is measured again (--repeat); it is left out of the knee",
			d.FromTokS, d.From, d.ToTokS, d.To))
	}
	pts := throughputPoints(levels)
	if len(pts) >= kneerule.MinLevels {
		var x, y []float64
		for _, p := range pts {
			x = append(x, p.N)
			y = append(y, p.X)
		}
		if kn, ok := kneedle(x, y, 1); ok {
			evidence = append(evidence, fmt.Sprintf("Kneedle (S=1) places the knee at concurrency %g", kn))
		}
	}
	return j.Knee, evidence, j.Found, drops
}

// kneePoints are the levels as kneerule reads them: each level's throughput with
// its relative standard error from its bootstrap interval (when it has one), and
// a pooled point's measurements (its repeats).
func kneePoints(levels []Level) []kneerule.Point {
	var out []kneerule.Point
	for _, l := range sortedLevels(levels) {
		p := kneerule.Point{X: offered(l), TokS: l.OutputTokS, Measurements: max(l.pooled, 1), RelSE: l.pooledRelSE}
		if l.pooled <= 1 {
			p.RelSE = l.ThroughputRelSE()
		}
		out = append(out, p)
	}
	return out
}

// sloRatio is the worst percentile/target over the SLOs that are set, each at its
// own percentile (p99 unless the run's criteria or the options say otherwise, as
// MLPerf Inference's LLM server scenario constrains TTFT and TPOT); +Inf when a
// latency has no value to measure. (Goodput, per request, is computed beside it
// from every SLO at once.)
func sloRatio(l Level, slo SLO) (ratio float64, worst string) {
	check := func(name string, target *float64) {
		if target == nil || *target <= 0 {
			return
		}
		r := math.Inf(1)
		if v := sloSummary(l, slo, name); v != nil {
			r = *v / *target
		}
		if r > ratio || worst == "" {
			ratio, worst = r, name
		}
	}
	check("TTFT", slo.TTFT)
	check("TPOT", slo.TPOT)
	check("E2E", slo.E2E)
	return ratio, worst
}

// sloSummary is the level's latency at the percentile its target holds at.
func sloSummary(l Level, slo SLO, name string) *float64 {
	s := l.E2E
	switch name {
	case "TTFT":
		s = l.TTFT
	case "TPOT":
		s = l.TPOT
	}
	v, _ := s.TailValue(slo.percentile(name))
	return v
}

func sloTarget(slo SLO, name string) float64 {
	switch name {
	case "TTFT":
		return *slo.TTFT
	case "TPOT":
		return *slo.TPOT
	}
	return *slo.E2E
}

// sloCeiling is the largest concurrency meeting the SLOs: walking up the levels, the
// first that misses them, with the crossing interpolated linearly between it and the
// level below (in the worst p99/target ratio) and rounded down to whole requests. A later level that happens to meet the
// SLOs again does not lift it: the ceiling is where serving stops being reliable.
// below is true when even the lowest level misses the SLOs (value 0).
func sloCeiling(levels []Level, slo SLO) (value float64, evidence string, found, below bool) {
	if slo.none() {
		return 0, "", false, false
	}
	ls := sortedLevels(levels)
	for i, l := range ls {
		r, name := sloRatio(l, slo)
		if r <= 1 {
			continue
		}
		n := offered(l)
		got := "no successful request"
		if p := sloSummary(l, slo, name); p != nil {
			got = fmt.Sprintf("%s %s", PercentileName(slo.percentile(name)), fmtSeconds(*p))
		}
		if i == 0 {
			return 0, fmt.Sprintf("%s %s misses the %s SLO already at the lowest level (concurrency %g)",
				name, got, fmtSeconds(sloTarget(slo, name)), n), true, true
		}
		prev := ls[i-1]
		rp, _ := sloRatio(prev, slo)
		pn := offered(prev)
		cross := pn
		if !math.IsInf(r, 1) && r > rp {
			cross = pn + (1-rp)/(r-rp)*(n-pn)
		}
		// A concurrency a user configures is whole: the floor of the crossing, but
		// never below the level that met the targets (an open-loop level's measured
		// concurrency is fractional and was met as it stands).
		value = math.Max(pn, math.Floor(cross))
		return value, fmt.Sprintf("%s %s misses the %s SLO at concurrency %g; it is met at %g; crossing interpolated at %.2f, so it is met up to %g concurrent requests",
			name, got, fmtSeconds(sloTarget(slo, name)), n, pn, cross, value), true, false
	}
	if len(ls) > 0 {
		return 0, fmt.Sprintf("every tested level up to concurrency %g meets the SLOs", offered(ls[len(ls)-1])), false, false
	}
	return 0, "", false, false
}

func fmtSeconds(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.2f s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.0f µs", s*1e6)
}

// realistic picks the realistic ceiling: the lowest of the ceilings found, and where
// several lie within tieTolerance of it, the one named first in cause-before-symptom
// order (kv, batch, errors, slo, knee). evidence holds the words for each limit.
func realistic(c Ceilings, evidence map[string][]string) Ceiling {
	values := map[string]*float64{"kv": c.KV, "batch": c.Batch, "errors": c.Errors, "slo": c.SLO, "knee": c.Knee}
	lowest := math.Inf(1)
	for _, v := range values {
		if v != nil && *v < lowest {
			lowest = *v
		}
	}
	if math.IsInf(lowest, 1) {
		return Ceiling{Binding: "none", Evidence: []string{"no ceiling found in the tested range"}}
	}
	var out Ceiling
	for _, name := range bindingOrder {
		v := values[name]
		if v == nil || *v > lowest*(1+tieTolerance)+1e-9 {
			continue
		}
		// The name is the cause among those tied, and the value is its own: a
		// ceiling is labelled with its own kind, never with a neighbour's figure.
		val := *v
		out = Ceiling{Concurrency: &val, Binding: name}
		break
	}
	out.Evidence = append(out.Evidence, evidence[out.Binding]...)
	// Name the other limits that tie, so that the reader sees the symptom too.
	for _, name := range bindingOrder {
		v := values[name]
		if name == out.Binding || v == nil || *v > lowest*(1+tieTolerance)+1e-9 {
			continue
		}
		out.Evidence = append(out.Evidence, fmt.Sprintf("the %s ceiling (%.1f) binds at the same point: %s",
			name, *v, strings.Join(evidence[name], "; ")))
	}
	return out
}

// ThroughputRelSE is the relative standard error of the level's output throughput
// from its bootstrap interval (a 95% percentile interval spans about ±1.96
// standard errors); 0 without one.
func (l Level) ThroughputRelSE() float64 {
	if l.CI == nil || l.CI.OutputTokS == nil || l.OutputTokS <= 0 {
		return 0
	}
	return (l.CI.OutputTokS.High - l.CI.OutputTokS.Low) / (2 * 1.96 * l.OutputTokS)
}
