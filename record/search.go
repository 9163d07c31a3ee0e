package record

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The ceiling search (--concurrency auto, --rate auto) as pure functions of the
// levels judged so far, so that --resume continues a killed search to the same
// answer and every rule is tested without an engine:
//
//   - start from the plan's prediction, else the server's declared capacity, else 1
//     (searchStart);
//   - ramp geometrically (×2) from the highest passing level until one fails, never
//     beyond the limit (what the KV cache holds, unless --beyond-kv);
//   - a failing start goes down geometrically (÷2) until a level passes;
//   - then bisect between the highest passing and the lowest failing level until the
//     bracket is within the resolution;
//   - an invalid level is run again, longer (×2, ×4, ×8), not judged;
//   - --sustain holds the ceiling found as one more level.
//
// The knee is a criterion of a pair of levels (the gain from the nearest lower
// level, per doubling), so it is recomputed from the measured throughputs whenever a
// level is added: the lowest level above 1 has nothing to compare with, and when a
// search starting high has no judged level yet it first runs one below as a
// reference.

// kneeNoise is the smallest throughput gain between two levels that counts as a
// gain at all: a level's throughput is measured to a few percent, so between
// close levels (a bisection's) a gain per doubling computed from less would be
// noise multiplied by the inverse of a small step.
const kneeNoise = 0.03

// searchConfig is what the search needs besides the levels.
type searchConfig struct {
	start    float64 // first level
	limit    float64 // no level above it (0: none)
	limitWhy string  // words for the limit, e.g. "the server's KV cache holds 24 requests of 1536 tokens"
	integer  bool    // closed loop: whole requests
	resPct   float64 // resolution as a share of the bracket's lower end (0.10)
	resAbs   float64 // resolution in requests (or requests/s) (1)
	// knee is the gain per doubling below which a level fails the knee (0: off).
	knee      float64
	maxReruns int // reruns of an invalid level before it counts as failing validity
	sustain   bool
	unit      string // "concurrent requests" or "requests/s"
}

// searchLevel is one level as the search saw it: where it ran, whether it was
// valid, what it measured and which of the other criteria failed there.
type searchLevel struct {
	x       float64
	phase   string
	invalid string // why not judged ("" = judged)
	// failed and evidence are the failing criteria other than the knee.
	failed   []string
	evidence []string
	tokS     float64 // output throughput of the steady-state window (for the knee)
}

// searchMove is what the search does next.
type searchMove struct {
	x     float64
	phase string
	scale int // level size multiplier (a rerun)
	done  bool
}

// searchVerdict is one level's verdict with the knee recomputed from its neighbour.
type searchVerdict struct {
	verdict  string // pass, fail, invalid, unjudged (the knee has no lower level yet)
	failed   []string
	evidence []string
}

// searchState is the bracket the levels give and the verdict of each.
type searchState struct {
	verdicts []searchVerdict // one per level, in order
	lo, hi   float64         // highest pass; lowest fail above it (0: none)
	// bound and boundEvidence name what failed at hi (or the limit when hi is 0).
	bound, boundEvidence string
}

// judgeSearch recomputes every level's verdict, the knee from the nearest lower
// judged-valid level, and the bracket.
func judgeSearch(cfg searchConfig, levels []searchLevel) searchState {
	st := searchState{verdicts: make([]searchVerdict, len(levels))}
	// The valid levels by x (the latest one where a point ran twice), for the knee.
	type pt struct {
		x    float64
		tokS float64
	}
	var pts []pt
	latest := map[float64]int{}
	for i, l := range levels {
		if l.invalid == "" && l.phase != "sustain" {
			latest[l.x] = i
		}
	}
	for x, i := range latest {
		pts = append(pts, pt{x, levels[i].tokS})
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmpFloat(a.x, b.x) })
	below := func(x float64) (pt, bool) {
		var best pt
		ok := false
		for _, p := range pts {
			if p.x < x {
				best, ok = p, true
			}
		}
		return best, ok
	}
	for i, l := range levels {
		v := searchVerdict{failed: slices.Clone(l.failed), evidence: slices.Clone(l.evidence)}
		switch {
		case l.invalid != "" && len(l.failed) == 0 && invalidRun(levels[:i+1]) > cfg.maxReruns:
			// Still invalid after its reruns: it cannot be shown to pass.
			v.verdict = "fail"
			v.failed = []string{"validity"}
			v.evidence = []string{fmt.Sprintf("still invalid after %d longer reruns: %s", cfg.maxReruns, l.invalid)}
			st.verdicts[i] = v
			continue
		case l.invalid != "" && len(l.failed) == 0:
			v.verdict = "invalid"
			v.evidence = []string{l.invalid}
			st.verdicts[i] = v
			continue
		case l.invalid != "":
			// A failure that needs no valid window (errors, KV evidence) still counts.
			v.verdict = "fail"
			st.verdicts[i] = v
			continue
		}
		kneeJudged := cfg.knee <= 0 || l.x <= 1
		if cfg.knee > 0 && l.x > 1 {
			if ref, ok := below(l.x); ok {
				kneeJudged = true
				g := gainPerDoubling(ref.x, ref.tokS, l.x, l.tokS)
				switch {
				case g < cfg.knee:
					v.failed = append(v.failed, "knee")
					v.evidence = append(v.evidence, fmt.Sprintf("throughput gains %.1f%% per doubling from %s (%.1f tok/s) to %s (%.1f tok/s), below %.0f%%",
						100*g, fmtX(ref.x), ref.tokS, fmtX(l.x), l.tokS, 100*cfg.knee))
				case ref.tokS > 0 && l.tokS < ref.tokS*(1+kneeNoise):
					v.failed = append(v.failed, "knee")
					v.evidence = append(v.evidence, fmt.Sprintf("throughput rises only %.1f%% from %s (%.1f tok/s) to %s (%.1f tok/s), within the %.0f%% a level's throughput is measured to",
						100*(l.tokS/ref.tokS-1), fmtX(ref.x), ref.tokS, fmtX(l.x), l.tokS, 100*kneeNoise))
				}
			}
		}
		switch {
		case len(v.failed) > 0:
			v.verdict = "fail"
		case !kneeJudged:
			v.verdict = "unjudged"
		default:
			v.verdict = "pass"
		}
		st.verdicts[i] = v
	}
	for i, l := range levels {
		if l.phase != "sustain" && st.verdicts[i].verdict == "pass" && l.x > st.lo {
			st.lo = l.x
		}
	}
	for i, l := range levels {
		v := st.verdicts[i]
		if l.phase != "sustain" && v.verdict == "fail" && l.x > st.lo && (st.hi == 0 || l.x < st.hi) {
			st.hi = l.x
			st.bound = strings.Join(v.failed, ", ")
			st.boundEvidence = strings.Join(v.evidence, "; ")
		}
	}
	return st
}

// gainPerDoubling is the throughput gain from (x0, t0) to (x1, t1), x1 > x0,
// scaled to one doubling of the level: (t1/t0)^(1/log2(x1/x0)) − 1.
func gainPerDoubling(x0, t0, x1, t1 float64) float64 {
	if t0 <= 0 {
		if t1 > 0 {
			return math.Inf(1)
		}
		return 0
	}
	return math.Pow(t1/t0, 1/math.Log2(x1/x0)) - 1
}

// resolution is the widest bracket the search stops at, above lo.
func (c searchConfig) resolution(lo float64) float64 {
	return math.Max(c.resPct*lo, c.resAbs)
}

// nextSearchLevel decides the next level from the levels run so far.
func nextSearchLevel(cfg searchConfig, levels []searchLevel) searchMove {
	if len(levels) == 0 {
		return searchMove{x: cfg.start, phase: "start", scale: 1}
	}
	last := levels[len(levels)-1]
	if last.phase == "sustain" {
		return searchMove{done: true}
	}
	st := judgeSearch(cfg, levels)
	if st.verdicts[len(levels)-1].verdict == "invalid" {
		if n := rerunsAt(levels); n < cfg.maxReruns {
			return searchMove{x: last.x, phase: "rerun", scale: 1 << (n + 1)}
		}
	}
	lowest := math.Inf(1)
	for _, l := range levels {
		lowest = math.Min(lowest, l.x)
	}
	var next float64
	phase := ""
	switch {
	case st.hi == 0 && st.lo == 0:
		// Nothing judged yet (the start's knee has no reference, or the start was
		// invalid past its reruns): a level below.
		next, phase = cfg.down(lowest), "down"
	case st.hi == 0 && cfg.limit > 0 && st.lo >= cfg.limit, st.hi > 0 && st.lo > 0 && st.hi-st.lo <= cfg.resolution(st.lo):
		// Bracketed: unless the knee below the ceiling is not yet resolved.
		if m, ok := cfg.kneeBelow(levels, st.lo); ok {
			next, phase = m, "bisect"
			break
		}
		return cfg.finish(st, levels)
	case st.hi == 0:
		next, phase = cfg.up(st.lo), "ramp"
	case st.lo == 0:
		next, phase = cfg.down(lowest), "down"
	default:
		// The knee below lo first: while it may lie there, narrowing above lo
		// spends levels on a bracket that is about to move.
		if m, ok := cfg.kneeBelow(levels, st.lo); ok {
			next, phase = m, "bisect"
			break
		}
		next, phase = cfg.mid(st.lo, st.hi), "bisect"
	}
	if next <= 0 || tested(levels, next) {
		// Nowhere left to go (below 1, or a level already judged): the answer stands.
		return cfg.finish(st, levels)
	}
	return searchMove{x: next, phase: phase, scale: 1}
}

// kneeElasticity is the share of proportional growth (log t1/t0 over log x1/x0)
// above which a pair of levels is taken to hold no plateau between them: when the
// throughput plateau started at p·x1 inside the pair (x1/2, x1), the pair's
// elasticity is 1 + log2(p), so 0.9 leaves p above 0.93, within the resolution.
const kneeElasticity = 0.9

// kneeBelow says where to run a level when the knee may lie below the ceiling lo:
// the knee is judged on a pair of levels, and a pair wider than the resolution that
// grew less than proportionally may hold the plateau's start anywhere inside it, lo
// included. The answer is the midpoint of lo and the level below it.
func (c searchConfig) kneeBelow(levels []searchLevel, lo float64) (float64, bool) {
	if c.knee <= 0 || lo <= 1 {
		return 0, false
	}
	var y, ty, tlo float64
	for _, l := range levels {
		if l.invalid != "" || l.phase == "sustain" {
			continue
		}
		if l.x == lo {
			tlo = l.tokS
		}
		if l.x < lo && l.x > y {
			y, ty = l.x, l.tokS
		}
	}
	if y == 0 || lo-y <= c.resolution(y) || ty <= 0 {
		return 0, false
	}
	if tlo > 0 && math.Log(tlo/ty)/math.Log(lo/y) >= kneeElasticity {
		return 0, false
	}
	m := c.mid(y, lo)
	return m, m > 0 && !tested(levels, m)
}

// finish ends the search, or holds the ceiling for --sustain.
func (c searchConfig) finish(st searchState, levels []searchLevel) searchMove {
	if c.sustain && st.lo > 0 {
		for _, l := range levels {
			if l.phase == "sustain" {
				return searchMove{done: true}
			}
		}
		return searchMove{x: st.lo, phase: "sustain", scale: 1}
	}
	return searchMove{done: true}
}

func tested(levels []searchLevel, x float64) bool {
	for _, l := range levels {
		if l.x == x && l.invalid == "" {
			return true
		}
	}
	return false
}

// rerunsAt counts the reruns of the invalid level that ends the search.
func rerunsAt(levels []searchLevel) int {
	return invalidRun(levels) - 1
}

// invalidRun counts the consecutive invalid levels at the last level's x that end
// levels (the last one and its reruns).
func invalidRun(levels []searchLevel) int {
	n := 0
	last := levels[len(levels)-1]
	for i := len(levels) - 1; i >= 0 && levels[i].x == last.x && levels[i].invalid != ""; i-- {
		n++
	}
	return n
}

func (c searchConfig) up(x float64) float64 {
	n := 2 * x
	if c.integer {
		n = math.Max(math.Ceil(n), x+1)
	}
	if c.limit > 0 {
		n = math.Min(n, c.limit)
	}
	return n
}

func (c searchConfig) down(x float64) float64 {
	if c.integer {
		if x <= 1 {
			return 0
		}
		return math.Max(1, math.Floor(x/2))
	}
	if x/2 < 1e-3 {
		return 0
	}
	return x / 2
}

func (c searchConfig) mid(lo, hi float64) float64 {
	m := (lo + hi) / 2
	if c.integer {
		m = math.Floor(m)
		if m <= lo || m >= hi {
			return 0
		}
	}
	return m
}

// searchAnswer states the search's result in the one sentence the live output,
// analyze and the report print.
func searchAnswer(cfg searchConfig, st searchState, done bool) string {
	prefix := ""
	if !done {
		prefix = "search not finished: so far "
	}
	switch {
	case st.lo == 0 && st.hi > 0:
		return fmt.Sprintf("%sno ceiling: %s already fails %s: %s", prefix, fmtX(st.hi), st.bound, st.boundEvidence)
	case st.lo == 0:
		return prefix + "no level judged yet"
	case st.hi == 0 && cfg.limit > 0 && st.lo >= cfg.limit:
		return fmt.Sprintf("%sceiling %s %s (not run beyond %s), bound by the search's limit: %s",
			prefix, fmtX(st.lo), cfg.unit, fmtX(st.lo), cfg.limitWhy)
	case st.hi == 0:
		return fmt.Sprintf("%sceiling at least %s %s (no level failed)", prefix, fmtX(st.lo), cfg.unit)
	}
	return fmt.Sprintf("%sceiling %s %s (bracket %s..%s), bound by %s at %s: %s",
		prefix, fmtX(st.lo), cfg.unit, fmtX(st.lo), fmtX(st.hi), st.bound, fmtX(st.hi), st.boundEvidence)
}

func fmtX(x float64) string { return fmt.Sprintf("%g", x) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
