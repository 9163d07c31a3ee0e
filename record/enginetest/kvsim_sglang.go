package enginetest

import (
	"math"
	"sort"
)

// SGLang's scheduling constants (server_args.py, global_config.py).
const (
	sglangInitRatio        = 0.7
	sglangMinRatio         = 0.7 * 0.14 // init_new_token_ratio × min_new_token_ratio_factor
	sglangRatioDecaySteps  = 600        // new_token_ratio_decay = (init − min) / 600
	sglangRetractSteps     = 20         // retract_decode_steps
	sglangDecodeLogSteps   = 40         // decode_log_interval: the gauges' refresh
	sglangTokenUsageDigits = 100        // token_usage is rounded to 2 decimals
)

// sglangSim imitates SGLang's scheduler over its token-to-KV pool (see profile.go).
type sglangSim struct {
	queues
	total, used int
	maxRunning  int
	chunk       int // chunked_prefill_size: prefill tokens a step
	ratio       float64
	decodes     int // steps since the last gauge refresh
	retracted   int // retracted since the last gauge refresh
	gauge       int // sglang:num_retracted_reqs as last published
	allTime     int64
}

func newSGLangSim(kvTokens, maxRunning, chunk int) *sglangSim {
	return &sglangSim{total: kvTokens, maxRunning: maxRunning, chunk: chunk, ratio: sglangInitRatio}
}

func (g *sglangSim) release(r *simReq) {
	g.used -= r.held
	r.held = 0
	r.computed = 0
}

func (g *sglangSim) add(r *simReq)    { g.waiting = append(g.waiting, r) }
func (g *sglangSim) cancel(r *simReq) { r.canceled = true }

func (g *sglangSim) step() stepOut {
	var out stepOut
	g.dropCanceled(g.release)
	if g.prefill(&out) {
		g.tick()
		return out
	}
	if len(g.running) == 0 {
		return out
	}
	if g.total-g.used < len(g.running) {
		g.retract(&out)
	}
	for _, r := range append([]*simReq(nil), g.running...) {
		if g.used >= g.total {
			break // cannot happen after retract: the last request always fits
		}
		r.held++
		g.used++
		r.computed++
		out.tokens++
		if sampled(&out, r) {
			g.release(r)
			r.done = true
			g.running = remove(g.running, r)
		}
	}
	g.ratio = math.Max(g.ratio-(sglangInitRatio-sglangMinRatio)/sglangRatioDecaySteps, sglangMinRatio)
	g.tick()
	return out
}

// tick counts a step toward the refresh of the published gauges.
func (g *sglangSim) tick() {
	g.decodes++
	if g.decodes >= sglangDecodeLogSteps {
		g.gauge, g.retracted, g.decodes = g.retracted, 0, 0
	}
}

// prefill admits waiting requests the way SGLang's PrefillAdder does and runs their
// prefill as one step; false when none could be admitted.
func (g *sglangSim) prefill(out *stepOut) bool {
	if len(g.waiting) == 0 || len(g.running) >= g.maxRunning {
		return false
	}
	// Tokens the running requests are expected to still need.
	rem := float64(g.total - g.used)
	for _, r := range g.running {
		rem -= float64(r.maxOut-r.generated) * g.ratio
	}
	budget := g.chunk
	var batch []*simReq
	for len(g.waiting) > 0 && len(g.running)+len(batch) < g.maxRunning {
		r := g.waiting[0]
		in := r.need()
		left := r.maxOut - r.generated
		if float64(in+left) >= rem || (len(batch) > 0 && in > budget) {
			break
		}
		g.waiting = g.waiting[1:]
		batch = append(batch, r)
		rem -= float64(in) + float64(left)*g.ratio
		budget -= in
	}
	if len(batch) == 0 {
		return false
	}
	for _, r := range batch {
		in := r.need()
		r.held += in
		g.used += in
		r.computed += in
		out.tokens += in
		if !r.admitted {
			r.admitted = true
			out.admitted = append(out.admitted, r)
		}
		if sampled(out, r) {
			g.release(r)
			r.done = true
			continue
		}
		g.running = append(g.running, r)
	}
	return true
}

// retract frees running requests until 20 decode steps fit for the others
// (ScheduleBatch.retract_decode), re-queues them for recompute, and raises
// new_token_ratio to what the remaining requests suggest.
func (g *sglangSim) retract(out *stepOut) {
	before := append([]*simReq(nil), g.running...)
	sorted := append([]*simReq(nil), g.running...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].generated != sorted[j].generated {
			return sorted[i].generated > sorted[j].generated
		}
		return sorted[i].prompt < sorted[j].prompt
	})
	gone := map[*simReq]bool{}
	first := true
	for first || g.total-g.used < len(sorted)*sglangRetractSteps {
		first = false
		if len(sorted) == 1 {
			break
		}
		r := sorted[len(sorted)-1]
		sorted = sorted[:len(sorted)-1]
		g.release(r)
		r.preempted++
		g.retracted++
		g.allTime++
		out.preempted++
		gone[r] = true
		g.waiting = append(g.waiting, r)
	}
	g.running = g.running[:0]
	for _, r := range before {
		if !gone[r] {
			g.running = append(g.running, r)
		}
	}
	var gen, maxNew int
	for _, r := range g.running {
		gen += r.generated
		maxNew += r.maxOut
	}
	if maxNew > 0 {
		g.ratio = math.Min(1, float64(gen+sglangRetractSteps*len(g.running))/float64(maxNew))
	}
}

func (g *sglangSim) state() simState {
	usage := math.Round(float64(g.used)/float64(max(g.total, 1))*sglangTokenUsageDigits) / sglangTokenUsageDigits
	return simState{running: len(g.running), waiting: len(g.waiting), usedTokens: g.used, usage: usage,
		retractedRecent: g.gauge, preemptionsTotal: g.allTime}
}
