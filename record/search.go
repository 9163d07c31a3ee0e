package record

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/kneerule"
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
//   - an invalid level is run again, longer (×2, ×4, ×8), not judged, unless the
//     server's counters show it queued: then the search steps down to what it ran;
//   - a level whose throughput drops below the level before it is measured again;
//   - at the declared limit, one level below it shows the curve still rising (or
//     the search bisects below it for the knee);
//   - --sustain holds the ceiling found as one more level.
//
// The knee is judged on the whole curve with kneerule, the rule analyze names the
// knee with, so the search and the analysis of its trace give one answer: every
// level past the knee the rule finds fails the knee. A level whose throughput
// drops significantly below the level before it is re-measured before it can
// count (a busy machine's interference is not a plateau), and a level the server
// could not run at its concurrency because it queued (its own counters: running
// pinned, requests waiting) is evidence of a batch limit at what it ran: the level
// fails there, and the search steps down to it instead of re-running it longer.

// searchConfig is what the search needs besides the levels.
type searchConfig struct {
	start    float64 // first level
	limit    float64 // no level above it (0: none)
	limitWhy string  // words for the limit, e.g. "the server's KV cache holds 24 requests of 1536 tokens"
	integer  bool    // closed loop: whole requests
	resPct   float64 // resolution as a share of the bracket's lower end (0.10)
	resAbs   float64 // resolution in requests (or requests/s) (1)
	// knee is the gain per doubling below which the curve is flat (0: off).
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
	relSE    float64 // its relative standard error within the level (0: unknown)
	// queued is what the server ran at most while requests waited, from its own
	// counters, when the level was invalid for it (0: no such evidence).
	queued  float64
	waiting float64 // the requests waiting on average then
}

// searchMove is what the search does next.
type searchMove struct {
	x     float64
	phase string
	scale int // level size multiplier (a rerun)
	done  bool
}

// searchVerdict is one level's verdict with the knee judged on the whole curve.
type searchVerdict struct {
	verdict  string // pass, fail, invalid
	failed   []string
	evidence []string
}

// searchState is the bracket the levels give and the verdict of each.
type searchState struct {
	verdicts []searchVerdict // one per level, in order
	lo, hi   float64         // highest pass; lowest fail above it (0: none)
	// bound and boundEvidence name what failed at hi (or the limit when hi is 0);
	// boundSeen is false when hi was not run itself (a queueing server's level
	// above it showed the limit).
	bound, boundEvidence string
	boundSeen            bool
	knee                 kneerule.Judgement
}

// kneePoints are the valid levels as kneerule reads them, less those the server
// queued at: a point measured more than once (a re-measure) is the mean of its
// measurements.
func kneePoints(levels []searchLevel) []kneerule.Point {
	type acc struct {
		n               int
		sum, sumSq, rse float64
	}
	byX := map[float64]*acc{}
	var xs []float64
	for _, l := range levels {
		if l.invalid != "" || l.phase == "sustain" || l.tokS <= 0 || queuedBelow(l) {
			// A level the server queued at ran at what the server ran, not at
			// its concurrency: it is no point of the curve there.
			continue
		}
		a := byX[l.x]
		if a == nil {
			a = &acc{}
			byX[l.x] = a
			xs = append(xs, l.x)
		}
		a.n++
		a.sum += l.tokS
		a.sumSq += l.tokS * l.tokS
		a.rse += l.relSE
	}
	var out []kneerule.Point
	for _, x := range xs {
		a := byX[x]
		n := float64(a.n)
		mean := a.sum / n
		rse := a.rse / n / math.Sqrt(n)
		if a.n > 1 {
			sd := math.Sqrt(math.Max(0, (a.sumSq-n*mean*mean)/(n-1)))
			rse = math.Max(rse, sd/mean/math.Sqrt(n))
		}
		out = append(out, kneerule.Point{X: x, TokS: mean, RelSE: rse, Measurements: a.n})
	}
	return out
}

// judgeSearch recomputes every level's verdict, the knee from the whole curve, and
// the bracket.
func judgeSearch(cfg searchConfig, levels []searchLevel) searchState {
	st := searchState{verdicts: make([]searchVerdict, len(levels))}
	if cfg.knee > 0 {
		st.knee = kneerule.Judge(kneePoints(levels), cfg.knee)
	}
	for i, l := range levels {
		v := searchVerdict{failed: slices.Clone(l.failed), evidence: slices.Clone(l.evidence)}
		switch {
		case queuedBelow(l):
			// Not run at its concurrency because the server queued: a limit at
			// what it ran, below this level (its batch, unless its KV cache is
			// what the level's own failures name).
			v.verdict = "fail"
			if !slices.Contains(v.failed, "kv") {
				v.failed = append([]string{"batch"}, v.failed...)
				v.evidence = append([]string{fmt.Sprintf("at %s the server ran at most %s requests at once while %.0f waited on average (its own counters): a batch limit at %s",
					fmtX(l.x), fmtX(l.queued), l.waiting, fmtX(l.queued))}, v.evidence...)
			}
			st.verdicts[i] = v
			continue
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
		if st.knee.Found && l.x > st.knee.Knee && l.phase != "sustain" {
			v.failed = append(v.failed, "knee")
			v.evidence = append(v.evidence, "past the knee: "+st.knee.Why)
		}
		v.verdict = "pass"
		if len(v.failed) > 0 {
			v.verdict = "fail"
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
		x := boundAt(l)
		if l.phase != "sustain" && v.verdict == "fail" && x > st.lo && (st.hi == 0 || x < st.hi) {
			st.hi = x
			st.bound = strings.Join(v.failed, ", ")
			st.boundEvidence = strings.Join(v.evidence, "; ")
			st.boundSeen = x == l.x
		}
	}
	return st
}

// kneeAtLo reports whether the search is bound by the knee at its highest passing
// level: from the knee on the curve is flat (kneerule), so nothing between it and
// the failing level above can pass the knee, and the ceiling is the knee itself.
func (st searchState) kneeAtLo() bool {
	return st.hi > 0 && st.bound == "knee" && st.knee.Found && st.knee.Knee == st.lo
}

// boundAt is the lowest level a failing level shows to fail: itself, or for a
// level the server queued at, the level above what it ran.
func boundAt(l searchLevel) float64 {
	if queuedBelow(l) {
		return math.Floor(l.queued) + 1
	}
	return l.x
}

// queuedBelow reports whether a level shows, by the server's own counters, that
// the server ran fewer requests than the level offered while the rest waited: a
// limit below the level, whether or not the level was valid.
func queuedBelow(l searchLevel) bool {
	return l.queued > 0 && l.queued < l.x && l.phase != "sustain"
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
	// A drop is interference until measured again: measure it once more before
	// the knee may count it.
	for _, d := range st.knee.Unconfirmed() {
		if measuredAt(levels, d.To) == 1 {
			return searchMove{x: d.To, phase: "remeasure", scale: 1}
		}
	}
	// A level the server queued at shows its batch limit: step down to what it ran.
	if queuedBelow(last) {
		if q := math.Floor(last.queued); q >= 1 && q > st.lo && !tested(levels, q) {
			return searchMove{x: q, phase: "down", scale: 1}
		}
	}
	lowest := math.Inf(1)
	for _, l := range levels {
		lowest = math.Min(lowest, l.x)
	}
	var next float64
	phase := ""
	atLimit := st.hi == 0 && cfg.limit > 0 && st.lo >= cfg.limit
	kneeIsLo := st.kneeAtLo()
	switch {
	case st.hi == 0 && st.lo == 0:
		// Nothing judged yet (the start was invalid past its reruns, or failed):
		// a level below.
		next, phase = cfg.down(lowest), "down"
	case atLimit, kneeIsLo, st.hi > 0 && st.lo > 0 && st.hi-st.lo <= cfg.resolution(st.lo):
		// Bracketed: unless the knee is undecided between it and the level below
		// (measure them again), or the knee below the ceiling is not yet resolved.
		if x, ok := cfg.undecidedKnee(levels, st); ok {
			return searchMove{x: x, phase: "remeasure", scale: 1}
		}
		if m, ok := cfg.kneeBelow(levels, st.lo); ok {
			next, phase = m, "bisect"
			if !hasValidBelow(levels, st.lo) {
				phase = "down"
			}
			break
		}
		return cfg.finish(st, levels)
	case st.hi == 0:
		next, phase = cfg.up(st.lo), "ramp"
	case st.lo == 0:
		next, phase = cfg.down(math.Min(lowest, st.hi)), "down"
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

// kneeBelow says where to run a level when the knee may lie below the ceiling lo,
// more than a resolution step below it: the knee is judged on levels, and
// between lo and the valid level below it the curve may have turned flat anywhere.
// Below a throughput curve that grows at most proportionally to concurrency (a
// server's per-request speed does not rise with the batch), a plateau starting
// at p·lo (gain g per doubling past it) leaves the pair (y, lo) an elasticity
// log(T_lo/T_y)/log(lo/y) of at most 1 + log(p)·(1 − log2(1+g))/log(lo/y); the
// lower end of the measured elasticity's interval (kneerule's noise) bounds p
// from below, and when p·lo is within the resolution of lo there is no knee to
// find between them. Otherwise, or with no level below lo yet (one is needed to
// show the curve still rising at lo), the answer is the midpoint of y and lo, or
// the level half-way down.
func (c searchConfig) kneeBelow(levels []searchLevel, lo float64) (float64, bool) {
	if c.knee <= 0 || lo <= 1 {
		return 0, false
	}
	pts := kneePoints(levels)
	at := func(x float64) (kneerule.Point, bool) {
		for _, p := range pts {
			if p.X == x {
				return p, true
			}
		}
		return kneerule.Point{}, false
	}
	top, ok := at(lo)
	if !ok {
		return 0, false
	}
	for {
		var y kneerule.Point
		for _, p := range pts {
			if p.X < top.X && p.X > y.X {
				y = p
			}
		}
		if y.X == 0 {
			// Nothing below: one level half-way down shows whether the curve still
			// rises at top.
			m := c.down(top.X)
			return m, m > 0 && !tested(levels, m)
		}
		g := kneerule.PairGain(y, top)
		if g.Value < c.knee {
			// Flat between them by the best estimate: the knee lies at or below y.
			top = y
			continue
		}
		if top.X-y.X <= c.resolution(y.X) {
			return 0, false
		}
		// The elasticity's lower end: ln(1+gLow) per doubling over log2(top/y)
		// doublings.
		r := math.Log(top.X / y.X)
		eLow := math.Log1p(math.Max(g.Low, -0.99)) / math.Ln2
		pMin := math.Exp((eLow - 1) * r / (1 - math.Log2(1+c.knee)))
		if top.X-pMin*top.X <= c.resolution(pMin*top.X) {
			return 0, false
		}
		m := c.mid(y.X, top.X)
		return m, m > 0 && !tested(levels, m)
	}
}

// undecidedKnee says which level to measure again when the search is bound by a
// knee at its ceiling k but the rise from the valid level j below it is neither
// significantly above nor below the threshold: the knee may be j. A second
// measurement of each narrows their interval by √2; the level measured once is
// measured again, j first, once each.
func (c searchConfig) undecidedKnee(levels []searchLevel, st searchState) (float64, bool) {
	if !st.kneeAtLo() {
		return 0, false
	}
	var j, k kneerule.Point
	for _, p := range kneePoints(levels) {
		switch {
		case p.X == st.lo:
			k = p
		case p.X < st.lo && p.X > j.X:
			j = p
		}
	}
	if j.X == 0 || k.X == 0 {
		return 0, false
	}
	if g := kneerule.PairGain(j, k); g.Low >= c.knee || g.High < c.knee {
		return 0, false
	}
	switch {
	case j.Measurements < 2:
		return j.X, true
	case k.Measurements < 2:
		return k.X, true
	}
	return 0, false
}

// hasValidBelow reports whether a valid level lies below x.
func hasValidBelow(levels []searchLevel, x float64) bool {
	for _, l := range levels {
		if l.invalid == "" && l.phase != "sustain" && l.x < x {
			return true
		}
	}
	return false
}

// measuredAt counts the valid measurements at x.
func measuredAt(levels []searchLevel, x float64) int {
	n := 0
	for _, l := range levels {
		if l.x == x && l.invalid == "" && l.phase != "sustain" {
			n++
		}
	}
	return n
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
		return fmt.Sprintf("%sno ceiling found: no level passed; %s already fails %s: %s", prefix, fmtX(st.hi), st.bound, st.boundEvidence)
	case st.lo == 0 && done:
		return "no ceiling found: no level could be judged to pass"
	case st.lo == 0:
		return prefix + "no level judged yet"
	case st.hi == 0 && cfg.limit > 0 && st.lo >= cfg.limit:
		return fmt.Sprintf("%sceiling %s %s (not run beyond %s), bound by the search's limit: %s",
			prefix, fmtX(st.lo), cfg.unit, fmtX(st.lo), cfg.limitWhy)
	case st.hi == 0:
		return fmt.Sprintf("%sceiling at least %s %s (no level failed)", prefix, fmtX(st.lo), cfg.unit)
	case st.kneeAtLo():
		return fmt.Sprintf("%sceiling %s %s, bound by the knee: %s", prefix, fmtX(st.lo), cfg.unit, st.knee.Why)
	case !st.boundSeen:
		return fmt.Sprintf("%sceiling %s %s (bracket %s..%s), bound by %s: %s",
			prefix, fmtX(st.lo), cfg.unit, fmtX(st.lo), fmtX(st.hi), st.bound, st.boundEvidence)
	}
	return fmt.Sprintf("%sceiling %s %s (bracket %s..%s), bound by %s at %s: %s",
		prefix, fmtX(st.lo), cfg.unit, fmtX(st.lo), fmtX(st.hi), st.bound, fmtX(st.hi), st.boundEvidence)
}

func fmtX(x float64) string { return fmt.Sprintf("%g", x) }
