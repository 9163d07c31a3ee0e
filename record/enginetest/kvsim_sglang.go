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
	// The radix cache (kvsim_sglang_radix.go), nil without prefix caching. With
	// it, used counts the tokens of running requests outside the tree (their
	// held) plus the tree's locked tokens; the tree's unlocked tokens are free
	// to the scheduler and evicted when an allocation needs them.
	tree    *radixTree
	private int                    // tokens held outside the tree
	nodes   map[*simReq]*radixNode // the node each running request locks
	hitRate float64                // sglang:cache_hit_rate
}

func newSGLangSim(kvTokens, maxRunning, chunk int, prefixCaching bool) *sglangSim {
	g := &sglangSim{total: kvTokens, maxRunning: maxRunning, chunk: chunk, ratio: sglangInitRatio}
	if prefixCaching {
		g.tree, g.nodes = newRadixTree(), map[*simReq]*radixNode{}
	}
	return g
}

// release frees r's tokens (a retraction, a cancel): the tokens in the tree
// stay there, unlocked.
func (g *sglangSim) release(r *simReq) {
	if g.tree != nil {
		g.private -= r.held
		g.tree.lockPath(g.nodes[r], -1)
		delete(g.nodes, r)
		g.used = g.private + g.tree.locked
	} else {
		g.used -= r.held
	}
	r.held = 0
	r.computed = 0
}

// finish caches a finished request's tokens but the last (cache_finished_req)
// and releases it.
func (g *sglangSim) finish(r *simReq) {
	if g.tree != nil {
		n := r.prompt + r.generated - 1
		node, _ := g.tree.insert(requestIDs(r, n))
		// Its tokens are the tree's now or were held there already: nothing
		// private remains. The lock moves to the new node and is released.
		g.tree.lockPath(node, 1)
		g.tree.lockPath(g.nodes[r], -1)
		g.nodes[r] = node
	}
	g.release(r)
}

// requestIDs is the ids of r's first n tokens.
func requestIDs(r *simReq, n int) []uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = r.tokenID(i)
	}
	return ids
}

// alloc takes n tokens for r outside the tree, evicting unlocked tree tokens
// when the pool is short.
func (g *sglangSim) alloc(r *simReq, n int) {
	r.held += n
	if g.tree == nil {
		g.used += n
		return
	}
	if short := g.private + g.tree.total + n - g.total; short > 0 {
		g.tree.evict(short)
	}
	g.private += n
	g.used = g.private + g.tree.locked
}

// resetPrefixCache is Scheduler.flush_cache: refused while requests run or wait.
func (g *sglangSim) resetPrefixCache() bool {
	if g.tree == nil {
		return true
	}
	if !g.idle() {
		return false
	}
	g.tree.reset()
	g.used = g.private
	return true
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
		g.alloc(r, 1)
		r.computed++
		out.tokens++
		if sampled(&out, r) {
			g.finish(r)
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
	hits, news := 0, 0
	for len(g.waiting) > 0 && len(g.running)+len(batch) < g.maxRunning {
		r := g.waiting[0]
		var node *radixNode
		prefix, lock := 0, 0
		if g.tree != nil {
			node, prefix = g.tree.match(requestIDs(r, r.need()-1))
			lock = g.tree.unlocked(node)
		}
		in := r.need() - prefix
		left := r.maxOut - r.generated
		if float64(in+left+lock) >= rem || (len(batch) > 0 && in > budget) {
			break
		}
		g.waiting = g.waiting[1:]
		batch = append(batch, r)
		rem -= float64(in+lock) + float64(left)*g.ratio
		budget -= in
		if g.tree != nil {
			g.tree.lockPath(node, 1)
			g.nodes[r] = node
			g.used = g.private + g.tree.locked
			r.computed = prefix
			if !r.admitted {
				r.cached.Store(int64(prefix))
			}
			hits += prefix
		}
		news += in
	}
	if len(batch) == 0 {
		return false
	}
	if g.tree != nil && hits+news > 0 {
		g.hitRate = float64(hits) / float64(hits+news)
	}
	for _, r := range batch {
		in := r.need()
		g.alloc(r, in)
		r.computed += in
		out.tokens += in
		if g.tree != nil {
			g.cachePrompt(r)
		}
		if !r.admitted {
			r.admitted = true
			out.admitted = append(out.admitted, r)
		}
		if sampled(out, r) {
			g.finish(r)
			r.done = true
			continue
		}
		g.running = append(g.running, r)
	}
	return true
}

// cachePrompt inserts r's computed tokens into the tree after its prefill and
// moves its lock there (cache_unfinished_req); tokens the tree held already are
// freed.
func (g *sglangSim) cachePrompt(r *simReq) {
	node, _ := g.tree.insert(requestIDs(r, r.computed))
	g.tree.lockPath(node, 1)
	g.tree.lockPath(g.nodes[r], -1)
	g.nodes[r] = node
	g.private -= r.held
	r.held = 0
	g.used = g.private + g.tree.locked
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
		retractedRecent: g.gauge, preemptionsTotal: g.allTime, hitRate: g.hitRate}
}
