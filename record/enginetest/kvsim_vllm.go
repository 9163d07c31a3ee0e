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
}

func newVLLMSim(kvTokens, maxSeqs, maxBatched int, watermark float64) *vllmSim {
	blocks := kvTokens / blockSize
	return &vllmSim{blocks: blocks, maxSeqs: maxSeqs, maxBatched: maxBatched,
		watermarkBlocks: int(watermark * float64(blocks))}
}

// blocksFor is the number of blocks n tokens occupy.
func blocksFor(n int) int { return (n + blockSize - 1) / blockSize }

func (v *vllmSim) free() int { return v.blocks - v.used }

func (v *vllmSim) release(r *simReq) {
	v.used -= r.held
	r.held = 0
	r.computed = 0
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
		grow := blocksFor(r.computed+n) - r.held
		r.held += grow
		v.used += grow
		sched = append(sched, scheduled{r, n})
		budget -= n
		i++
	}
	// Waiting requests only in a step that preempted nothing.
	if out.preempted == 0 {
		for len(v.waiting) > 0 && budget > 0 && len(v.running) < v.maxSeqs {
			r := v.waiting[0]
			n := min(r.need(), budget)
			wm := 0
			if len(sched) > 0 {
				wm = v.watermarkBlocks
			}
			need := blocksFor(r.computed + n)
			if need+wm > v.free() {
				break
			}
			v.waiting = v.waiting[1:]
			v.running = append(v.running, r)
			r.held += need
			v.used += need
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

func (v *vllmSim) state() simState {
	return simState{running: len(v.running), waiting: len(v.waiting), usedTokens: v.used * blockSize,
		usage: float64(v.used) / float64(max(v.blocks, 1)), preemptionsTotal: v.preemptions}
}
