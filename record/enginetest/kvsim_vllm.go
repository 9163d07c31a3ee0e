package enginetest

// vllmSim imitates vLLM v1's scheduler over a paged KV cache (see profile.go).
type vllmSim struct {
	queues
	blocks          int // total KV blocks
	used            int // blocks allocated
	maxSeqs         int
	maxBatched      int
	watermarkBlocks int
	preemptions     int64
	// pool is the block pool with prefix caching (kvsim_vllm_prefix.go); nil
	// without it, when the blocks are only counted.
	pool *blockPool
}

func newVLLMSim(kvTokens, maxSeqs, maxBatched int, watermark float64, prefixCaching bool) *vllmSim {
	blocks := kvTokens / blockSize
	v := &vllmSim{blocks: blocks, maxSeqs: maxSeqs, maxBatched: maxBatched,
		watermarkBlocks: int(watermark * float64(blocks))}
	if prefixCaching {
		v.pool = newBlockPool(blocks)
	}
	return v
}

// blocksFor is the number of blocks n tokens occupy.
func blocksFor(n int) int { return (n + blockSize - 1) / blockSize }

func (v *vllmSim) free() int {
	if v.pool != nil {
		return v.pool.numFree()
	}
	return v.blocks - v.used
}

func (v *vllmSim) release(r *simReq) {
	if v.pool != nil {
		v.pool.release(r)
		v.used = v.pool.used
	} else {
		v.used -= r.held
	}
	r.held = 0
	r.computed = 0
}

// grow gives r n more blocks.
func (v *vllmSim) grow(r *simReq, n int) {
	r.held += n
	if v.pool != nil {
		v.pool.allocate(r, n)
		v.used = v.pool.used
		return
	}
	v.used += n
}

func (v *vllmSim) add(r *simReq) { v.waiting = append(v.waiting, r) }

func (v *vllmSim) cancel(r *simReq) { r.canceled = true }

// preempt frees the newest running request and puts it at the head of the waiting
// queue, to be recomputed (vLLM's _preempt_request with recompute).
func (v *vllmSim) preemptNewest(out *stepOut) *simReq {
	last := v.running[len(v.running)-1]
	v.running = v.running[:len(v.running)-1]
	v.release(last)
	last.preempted++
	v.preemptions++
	out.preempted++
	v.waiting = append([]*simReq{last}, v.waiting...)
	return last
}

type scheduled struct {
	r *simReq
	n int
}

func (v *vllmSim) step() stepOut {
	var out stepOut
	v.dropCanceled(v.release)
	budget := v.maxBatched
	var sched []scheduled
	// Running requests first, in order; each needs blocks for the tokens it computes.
	for i := 0; i < len(v.running) && budget > 0; {
		r := v.running[i]
		n := min(r.need(), budget)
		ok := true
		for blocksFor(r.computed+n)-r.held > v.free() {
			// Popping from the end never takes a request scheduled earlier in
			// this step: those lie before i.
			if v.preemptNewest(&out) == r {
				ok = false
				break
			}
		}
		if !ok {
			break
		}
		v.grow(r, blocksFor(r.computed+n)-r.held)
		v.cacheFull(r, r.computed+n)
		sched = append(sched, scheduled{r, n})
		budget -= n
		i++
	}
	// Waiting requests only in a step that preempted nothing.
	if out.preempted == 0 {
		for len(v.waiting) > 0 && budget > 0 && len(v.running) < v.maxSeqs {
			r := v.waiting[0]
			// A request that already holds computed tokens (loaded back from a
			// host tier, kvsim_offload.go) does not look the GPU cache up again.
			lookup := v.pool != nil && r.computed == 0
			var hit []int
			if lookup {
				hit = v.pool.lookup(r)
			}
			cachedTokens := len(hit) * blockSize
			n := min(r.need()-cachedTokens, budget)
			wm := 0
			if len(sched) > 0 {
				wm = v.watermarkBlocks
			}
			need := blocksFor(r.computed+cachedTokens+n) - len(hit)
			if v.pool != nil {
				need += v.pool.evictable(hit) // touching a free cached block takes it from the free queue
			}
			if need+wm > v.free() {
				break
			}
			v.waiting = v.waiting[1:]
			v.running = append(v.running, r)
			if lookup {
				v.lookedUp(r, cachedTokens)
				v.pool.touch(r, hit)
				r.held, r.computed = len(hit), cachedTokens
				v.used = v.pool.used
			}
			v.grow(r, blocksFor(r.computed+n)-r.held)
			v.cacheFull(r, r.computed+n)
			if !r.admitted {
				r.admitted = true
				out.admitted = append(out.admitted, r)
			}
			sched = append(sched, scheduled{r, n})
			budget -= n
		}
	}
	for _, s := range sched {
		r := s.r
		r.computed += s.n
		out.tokens += s.n
		if r.need() > 0 {
			continue // a prefill chunk: no token yet
		}
		if sampled(&out, r) {
			v.release(r)
			r.done = true
			v.running = remove(v.running, r)
		}
	}
	return out
}

// cacheFull registers r's blocks that are full once n tokens are computed.
func (v *vllmSim) cacheFull(r *simReq, n int) {
	if v.pool != nil {
		v.pool.cacheFull(r, n)
	}
}

// lookedUp counts r's prefix-cache lookup: its first one sets the cached tokens
// its usage reports (Request.num_cached_tokens is set once) and feeds the
// counters; a resumed preempted request's lookup is counted apart by vLLM, so not
// in the counters here.
func (v *vllmSim) lookedUp(r *simReq, hit int) {
	if r.preempted > 0 {
		return
	}
	r.cached.Store(int64(hit))
	v.pool.queries += int64(r.prompt + r.generated)
	v.pool.hits += int64(hit)
}

// resetPrefixCache is POST /reset_prefix_cache: false when blocks are in use.
func (v *vllmSim) resetPrefixCache() bool {
	return v.pool == nil || v.pool.reset()
}

func (v *vllmSim) state() simState {
	st := simState{running: len(v.running), waiting: len(v.waiting), usedTokens: v.used * blockSize,
		usage: float64(v.used) / float64(max(v.blocks, 1)), preemptionsTotal: v.preemptions}
	if v.pool != nil {
		st.prefixQueries, st.prefixHits = v.pool.queries, v.pool.hits
	}
	return st
}
