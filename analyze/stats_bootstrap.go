package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Error bars: a seeded bootstrap gives each level a 95% confidence interval for its
// throughput and latency percentiles, and re-runs the ceiling rules on every
// resample to say how stable the realistic ceiling is.
//
//   - Latency percentiles (TTFT, TPOT p50/p99) resample the level's successful
//     requests with replacement (requests are exchangeable within a level). The
//     sorted per-request values the percentiles already keep are the only input.
//   - Window figures (output tok/s, request/s, decode and waiting concurrency) are
//     rates over one window, whose requests overlap and share the server: they are
//     not independent, so resampling requests would understate the spread. They use
//     a circular block bootstrap over time: the window is cut into bootstrapBins
//     bins (tokens, completions and occupancy accumulated per bin in the second
//     pass), and each resample strings together blocks of consecutive bins, each
//     block at least one median request lifetime (E2E p50) long, so that one
//     request's tokens stay in one block.
//   - Intervals are percentile intervals (2.5th and 97.5th of the resampled values).
//   - Ceiling stability: resample b of every valid level (drawn independently per
//     level) replaces its figures, and the batch, knee and SLO rules run again (the
//     KV ceiling is a model, not a measurement, and stays). The share of resamples
//     giving the reported ceiling is its stability.
//
// Memory: four bins × bootstrapBins floats per level (6.4 KiB) plus nine floats per
// resample. The per-request values are those finish reads back from disk
// (spill.go), one level at a time: a level is resampled while they are loaded, so
// the draws never hold more than one level's values.

const (
	// defaultResamples is the number of bootstrap resamples (Options.Resamples 0).
	defaultResamples = 1000
	// bootstrapSeed seeds every resample stream: the same trace gives the same
	// intervals on every run.
	bootstrapSeed = 0x5eed
	// bootstrapBins is the number of time bins a window is cut into.
	bootstrapBins = 200
	// ciConfidence is the confidence of every interval.
	ciConfidence = 0.95
	// stableShare is the share of resamples that must give the reported ceiling for
	// it to count as stable.
	stableShare = 0.9
	// MinIntervalBlocks is the fewest independent blocks a window interval is
	// computed from: with fewer, the level is "too short for an interval" (null).
	MinIntervalBlocks = 5
	// MinIntervalRequests is the fewest successful requests a p50 interval is
	// computed from, MinP99IntervalRequests for a p99 (below 50 requests the p99 is
	// the largest value or next to it, and resampling it says nothing).
	MinIntervalRequests    = 20
	MinP99IntervalRequests = 50
)

// binAcc accumulates a level's window in bootstrapBins time bins during the second
// pass: output tokens, completions, and decode and waiting occupancy (ns).
type binAcc struct {
	ws, we                    int64
	width                     float64 // ns per bin
	tokens, done, dec, waitNs [bootstrapBins]float64
}

func (b *binAcc) init(ws, we int64) {
	b.ws, b.we = ws, we
	b.width = float64(we-ws) / bootstrapBins
}

// bin is the bin of a time inside the window.
func (b *binAcc) bin(t int64) int {
	if b.width <= 0 {
		return 0
	}
	return min(max(int(float64(t-b.ws)/b.width), 0), bootstrapBins-1)
}

// spread adds the overlap of [a, c] with the window to the bins it covers. Times
// are taken relative to the window's start: absolute nanoseconds since 1970 do not
// fit a float64 exactly.
func (b *binAcc) spread(dst *[bootstrapBins]float64, a, c int64) {
	lo, hi := max(a, b.ws), min(c, b.we)
	if hi <= lo || b.width <= 0 {
		return
	}
	rlo, rhi := float64(lo-b.ws), float64(hi-b.ws)
	for i := b.bin(lo); i <= b.bin(hi); i++ {
		s := float64(i) * b.width
		e := s + b.width
		if i == bootstrapBins-1 {
			e = float64(b.we - b.ws)
		}
		if ov := math.Min(e, rhi) - math.Max(s, rlo); ov > 0 {
			dst[i] += ov
		}
	}
}

// occupancy adds one attempt's waiting (send to first token, or to its end) and
// decoding (first token to end) time, as levelAcc's waitNs and decodeNs do.
func (b *binAcc) occupancy(sent, ft, end int64, hasTok bool) {
	if hasTok {
		b.spread(&b.waitNs, sent, ft)
		b.spread(&b.dec, ft, end)
		return
	}
	b.spread(&b.waitNs, sent, end)
}

// success adds a successful request's tokens (out spread evenly over its chunks, by
// chunk arrival time) and its completion, as levelAcc's winTokens and winDone do.
func (b *binAcc) success(ft, end int64, gaps []int32, out int64) {
	per := float64(out) / float64(len(gaps)+1)
	t := ft
	if t >= b.ws && t <= b.we {
		b.tokens[b.bin(t)] += per
	}
	for _, g := range gaps {
		t += int64(g) * 1000
		if t >= b.ws && t <= b.we {
			b.tokens[b.bin(t)] += per
		}
	}
	if end >= b.ws && end <= b.we {
		b.done[b.bin(end)]++
	}
}

// levelResamples are the resampled figures of one level, one entry per resample.
type levelResamples struct {
	tok, req, dec, wait []float64
	ttft50, ttft99      []float64
	tpot50, tpot99      []float64
	e2e50, e2e99        []float64
	blockS, blocks      float64
	windowS             float64
}

// resampleLevel draws n resamples of one level with its own seeded stream.
func resampleLevel(l *levelAcc, lv Level, n int) *levelResamples {
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(uint32(lv.Level))))
	r := &levelResamples{windowS: lv.WindowS}
	lifetime := 0.0
	if lv.E2E.P50 != nil {
		lifetime = *lv.E2E.P50
	}
	r.blockBootstrap(rng, &l.bins, lifetime, n)
	r.ttft50, r.ttft99 = r.percentiles(rng, len(l.ttft), func(k int) float64 { return float64(l.ttft[k]) / 1e9 }, n)
	r.tpot50, r.tpot99 = r.percentiles(rng, len(l.tpot), func(k int) float64 { return l.tpot[k] }, n)
	// The E2E SLO reads the p99; compare (LevelResamples) reads both. They are
	// drawn last, so the other figures' streams do not depend on them.
	r.e2e50, r.e2e99 = r.percentiles(rng, len(l.e2e), func(k int) float64 { return float64(l.e2e[k]) / 1e9 }, n)
	return r
}

// blockBootstrap fills the window figures: a circular block bootstrap over the bins
// with blocks of ⌈lifetime / bin width⌉ bins (at most half the window).
func (r *levelResamples) blockBootstrap(rng *rand.Rand, b *binAcc, lifetime float64, n int) {
	binS := b.width / 1e9
	blk := 1
	if binS > 0 && lifetime > 0 {
		blk = int(math.Ceil(lifetime / binS))
	}
	blk = min(max(blk, 1), bootstrapBins/2)
	r.blockS = float64(blk) * binS
	r.blocks = float64(bootstrapBins) / float64(blk)
	m := (bootstrapBins + blk - 1) / blk
	scale := float64(bootstrapBins) / float64(m*blk)
	r.tok, r.req = make([]float64, n), make([]float64, n)
	r.dec, r.wait = make([]float64, n), make([]float64, n)
	if r.windowS <= 0 {
		return
	}
	for i := range n {
		var tok, done, dec, wait float64
		for range m {
			s := rng.IntN(bootstrapBins)
			for j := range blk {
				k := (s + j) % bootstrapBins
				tok += b.tokens[k]
				done += b.done[k]
				dec += b.dec[k]
				wait += b.waitNs[k]
			}
		}
		r.tok[i] = tok * scale / r.windowS
		r.req[i] = done * scale / r.windowS
		r.dec[i] = dec * scale / 1e9 / r.windowS
		r.wait[i] = wait * scale / 1e9 / r.windowS
	}
}

// percentiles resamples cnt sorted values (the k-th smallest is at(k)) n times with
// replacement and returns each resample's p50 and p99.
//
// A resample's percentile needs only two of its order statistics per percentile,
// and those can be drawn directly: a resample is n uniform draws U mapped to indices
// ⌊cnt·U⌋, so its (k+1)-th smallest index is ⌊cnt·U₍ₖ₊₁₎⌋ with U₍ₖ₊₁₎ ~ Beta(k+1, cnt−k)
// the order statistic of cnt uniforms, and each later order statistic follows from
// the one before: given U₍ₐ₎ = u, the remaining cnt−a uniforms are uniform on (u, 1),
// so U₍c₎ = u + (1−u)·Beta(c−a, cnt−c+1). That is exactly the distribution of a
// resample drawn index by index, at O(1) per resample instead of O(cnt)
// (TestOrderStatisticsMatchDraws compares the two).
func (r *levelResamples) percentiles(rng *rand.Rand, cnt int, at func(int) float64, n int) (p50, p99 []float64) {
	if cnt == 0 {
		return nil, nil
	}
	p50, p99 = make([]float64, n), make([]float64, n)
	var ranks [4]int // 1-based ranks ⌊h⌋+1 and ⌊h⌋+2 of each percentile, ascending
	var frac [2]float64
	for i, p := range [2]float64{50, 99} {
		h := float64(cnt-1) * p / 100
		lo := int(math.Floor(h))
		ranks[2*i], ranks[2*i+1] = lo+1, min(lo+2, cnt)
		frac[i] = h - float64(lo)
	}
	var vals [4]float64
	for i := range n {
		u, prev := 0.0, 0
		for j, k := range ranks {
			if k > prev {
				u += (1 - u) * distuv.Beta{Alpha: float64(k - prev), Beta: float64(cnt - k + 1), Src: rng}.Rand()
				prev = k
			}
			vals[j] = at(min(int(u*float64(cnt)), cnt-1))
		}
		p50[i] = vals[0] + frac[0]*(vals[1]-vals[0])
		p99[i] = vals[2] + frac[1]*(vals[3]-vals[2])
	}
	return p50, p99
}

// interval is the percentile interval of resampled values (sorted in place).
func interval(v []float64) Interval {
	slices.Sort(v)
	a := (1 - ciConfidence) / 2 * 100
	return Interval{Low: percentileSorted(v, a), High: percentileSorted(v, 100-a)}
}

// around widens an interval to hold the level's own figure: the bootstrap's
// percentiles never exclude what was observed.
func around(iv Interval, v float64) *Interval {
	iv.Low, iv.High = math.Min(iv.Low, v), math.Max(iv.High, v)
	return &iv
}

func optInterval(v []float64) *Interval {
	if len(v) == 0 {
		return nil
	}
	iv := interval(slices.Clone(v))
	return &iv
}

// resampleCount is the number of resamples of opt (Resamples ≥ 0).
func resampleCount(opt Options) int {
	if opt.Resamples == 0 {
		return defaultResamples
	}
	return opt.Resamples
}

// levelIntervals fills every level's CI from the resamples buildRun drew for each
// level while that level's values were loaded. It runs before modelRun: the knee
// reads each level's throughput interval.
func levelIntervals(r *Run, acc *runAcc, opt Options) {
	if opt.Resamples < 0 || len(r.Levels) == 0 {
		return
	}
	// Levels resample independently, each from its own seeded stream, while
	// buildRun has the level's values loaded (resampleLevel).
	res := make([]*levelResamples, len(r.Levels))
	for i, lv := range r.Levels {
		if l := acc.levels[int32(lv.Level)]; l != nil {
			res[i] = l.resampled
		}
	}
	for i := range r.Levels {
		rs := res[i]
		if rs == nil {
			continue
		}
		lv := r.Levels[i]
		ci := &LevelCI{BlockS: rs.blockS, Blocks: rs.blocks}
		if rs.blocks >= MinIntervalBlocks && lv.WindowS > 0 {
			ci.OutputTokS = around(interval(slices.Clone(rs.tok)), lv.OutputTokS)
			ci.RequestS = around(interval(slices.Clone(rs.req)), lv.RequestS)
		}
		if n := lv.TTFT.N; n >= MinIntervalRequests {
			ci.TTFTP50 = optInterval(rs.ttft50)
		}
		if n := lv.TTFT.N; n >= MinP99IntervalRequests {
			ci.TTFTP99 = optInterval(rs.ttft99)
		}
		if n := lv.TPOT.N; n >= MinIntervalRequests {
			ci.TPOTP50 = optInterval(rs.tpot50)
		}
		if n := lv.TPOT.N; n >= MinP99IntervalRequests {
			ci.TPOTP99 = optInterval(rs.tpot99)
		}
		r.Levels[i].CI = ci
		r.Levels[i].resamples = rs
	}
}

// bootstrapRun fills r.Bootstrap, and warns when the ceiling is unstable. It runs
// after modelRun, on the same resamples as levelIntervals.
func bootstrapRun(r *Run, acc *runAcc, opt Options) {
	n := opt.Resamples
	if n < 0 || len(r.Levels) == 0 {
		return
	}
	n = resampleCount(opt)
	res := make([]*levelResamples, len(r.Levels))
	for i, lv := range r.Levels {
		if l := acc.levels[int32(lv.Level)]; l != nil {
			res[i] = l.resampled
		}
	}
	r.Bootstrap = &Bootstrap{Resamples: n, Confidence: ciConfidence, Seed: bootstrapSeed}
	st := ceilingStability(r, res, n, opt)
	if st == nil {
		return
	}
	r.Bootstrap.Ceiling = st
	if !st.Stable {
		r.Warnings = append(r.Warnings, stabilityWarning(st))
	}
	var few []string
	for _, l := range r.Levels {
		if l.Valid && l.CI != nil && l.CI.Blocks < MinIntervalBlocks {
			few = append(few, offeredLabel(l))
		}
	}
	if len(few) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: too short for an interval (fewer than %d request lifetimes of window each, the fewest a throughput interval is drawn from); longer levels give one",
			strings.Join(few, ", "), MinIntervalBlocks))
	}
}

// stabilityWarning is the warning of an unstable ceiling.
func stabilityWarning(st *CeilingStability) string {
	return "the realistic ceiling is not stable under resampling: " + st.Text +
		": read it as the range " + st.RangeText() + ", and rerun with more requests per level (or --repeat) to narrow it"
}

// ceilingStability re-runs the ceiling rules on every resample of the valid levels.
func ceilingStability(r *Run, res []*levelResamples, n int, opt Options) *CeilingStability {
	var idx []int
	for i, l := range r.Levels {
		if l.Valid && res[i] != nil {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	values := make([]*float64, n)
	workers := min(runtime.GOMAXPROCS(0), n)
	parallel(workers, func(w int) {
		levels := make([]Level, len(idx))
		for b := w; b < n; b += workers {
			for j, i := range idx {
				levels[j] = resampledLevel(r.Levels[i], res[i], b)
			}
			values[b] = ceilingOf(levels, confirmedKV(r), r.Ceilings.Errors, runSlots(r), opt)
		}
	})
	return stabilityOf(r.Ceiling.Concurrency, values, "within-run resamples")
}

// resampledLevel is l with its figures from resample b.
func resampledLevel(l Level, rs *levelResamples, b int) Level {
	l.OutputTokS, l.RequestS = rs.tok[b], rs.req[b]
	l.DecodeConcurrency, l.WaitingConcurrency = rs.dec[b], rs.wait[b]
	if rs.ttft99 != nil {
		l.TTFT.P99 = ptr(rs.ttft99[b])
	}
	if rs.tpot99 != nil {
		l.TPOT.P99 = ptr(rs.tpot99[b])
	}
	if rs.e2e99 != nil {
		l.E2E.P99 = ptr(rs.e2e99[b])
	}
	return l
}

// confirmedKV is the KV ceiling the realistic ceiling may use: none when it is a
// prediction beyond the valid levels.
func confirmedKV(r *Run) *float64 {
	if p := r.Ceiling.Prediction; p != nil && p.Limit == "kv" {
		return nil
	}
	return r.Ceilings.KV
}

// runSlots is the slot count the server declared, nil when it declared none.
func runSlots(r *Run) *int64 {
	var sm struct {
		Slots *int64 `json:"slots"`
	}
	if len(r.Server) > 0 && json.Unmarshal(r.Server, &sm) == nil && sm.Slots != nil && *sm.Slots > 0 {
		return sm.Slots
	}
	if r.Capacity != nil {
		return r.Capacity.Slots
	}
	return nil
}

// ceilingOf is the realistic ceiling of levels by the rules of modelRun, without
// the evidence.
func ceilingOf(levels []Level, kv, errs *float64, slots *int64, opt Options) *float64 {
	levels = poolRepeats(levels)
	c := Ceilings{KV: kv, Errors: errs}
	if v, _, ok := batchCeiling(levels); ok {
		v, _ = slotBatch(v, "", slots)
		c.Batch = &v
	}
	if gain, on := opt.kneeGain(); on {
		if v, _, ok, _ := kneeCeiling(levels, gain); ok {
			c.Knee = &v
		}
	}
	if v, _, found, _ := sloCeiling(levels, opt.SLO); found {
		c.SLO = &v
	}
	return realistic(c, nil).Concurrency
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines and waits for them.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// stabilityOf summarizes the resampled ceilings against the reported one.
func stabilityOf(reported *float64, values []*float64, what string) *CeilingStability {
	key := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return fmt.Sprintf("%.6g", *v)
	}
	counts := map[string]int{}
	first := map[string]*float64{}
	var found []float64
	for _, v := range values {
		k := key(v)
		counts[k]++
		if _, ok := first[k]; !ok {
			first[k] = v
		}
		if v != nil {
			found = append(found, *v)
		}
	}
	n := float64(len(values))
	st := &CeilingStability{Share: float64(counts[key(reported)]) / n}
	for k, c := range counts {
		st.Outcomes = append(st.Outcomes, CeilingOutcome{Concurrency: first[k], Share: float64(c) / n})
	}
	sort.Slice(st.Outcomes, func(i, j int) bool {
		a, b := st.Outcomes[i], st.Outcomes[j]
		if a.Share != b.Share {
			return a.Share > b.Share
		}
		return key(a.Concurrency) < key(b.Concurrency)
	})
	if len(found) > 0 {
		iv := interval(found)
		st.Low, st.High = ptr(iv.Low), ptr(iv.High)
		if reported != nil {
			st.Low, st.High = ptr(math.Min(iv.Low, *reported)), ptr(math.Max(iv.High, *reported))
		}
	}
	st.Stable = st.Share >= stableShare
	st.Text = stabilityText(reported, st, what)
	return st
}

func ceilingWord(v *float64) string {
	if v == nil {
		return "no ceiling"
	}
	return concCell(v)
}

// stabilityText is "32 in 91% of resamples, else 24 (7%), 48 (2%)".
func stabilityText(reported *float64, st *CeilingStability, what string) string {
	s := fmt.Sprintf("%s in %.0f%% of %s", ceilingWord(reported), 100*st.Share, what)
	var else_ []string
	for _, o := range st.Outcomes {
		same := (o.Concurrency == nil) == (reported == nil) && (reported == nil || *o.Concurrency == *reported)
		if same {
			continue
		}
		else_ = append(else_, fmt.Sprintf("%s (%.0f%%)", ceilingWord(o.Concurrency), 100*o.Share))
		if len(else_) == 3 {
			break
		}
	}
	if len(else_) > 0 {
		s += ", else " + strings.Join(else_, ", ")
	}
	return s
}
