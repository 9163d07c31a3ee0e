package enginetest

// llamaCtxExceeded is what llama.cpp's server sends every processing slot when a
// batch finds no free KV cells even one token at a time (server-context.cpp).
const llamaCtxExceeded = "Context size has been exceeded."

// llamaSim imitates llama.cpp's server slots over a unified KV cache, or over
// per-slot caches (see profile.go).
type llamaSim struct {
	queues
	total, used int
	slots       int
	batch       int // n_batch: prompt tokens a step
	unified     bool
	steps       int64
}

func newLlamaSim(kvTokens, slots, batch int, unified bool) *llamaSim {
	return &llamaSim{total: kvTokens, slots: slots, batch: batch, unified: unified}
}

func (l *llamaSim) release(r *simReq) {
	l.used -= r.held
	r.held = 0
	r.computed = 0
}

func (l *llamaSim) add(r *simReq)    { l.waiting = append(l.waiting, r) }
func (l *llamaSim) cancel(r *simReq) { r.canceled = true }

func (l *llamaSim) step() stepOut {
	var out stepOut
	l.dropCanceled(l.release)
	for len(l.waiting) > 0 && len(l.running) < l.slots {
		r := l.waiting[0]
		l.waiting = l.waiting[1:]
		l.running = append(l.running, r)
		r.admitted = true
		out.admitted = append(out.admitted, r)
	}
	// The batch: one token of every decoding slot, then prompt tokens up to n_batch.
	type part struct {
		r *simReq
		n int
	}
	var parts []part
	need := 0
	budget := l.batch
	for _, r := range l.running {
		if r.computed >= r.prompt {
			parts = append(parts, part{r, 1})
			need++
			budget--
		}
	}
	for _, r := range l.running {
		if r.computed < r.prompt && budget > 0 {
			n := min(r.prompt-r.computed, budget)
			parts = append(parts, part{r, n})
			need += n
			budget -= n
		}
	}
	if len(parts) == 0 {
		return out
	}
	if l.unified && l.used+need > l.total {
		// The whole batch fails: every processing slot gets the error and is freed.
		for _, r := range l.running {
			l.release(r)
			r.failMsg = llamaCtxExceeded
			r.done = true
			out.failed = append(out.failed, r)
		}
		l.running = l.running[:0]
		return out
	}
	l.steps++
	for _, p := range parts {
		r := p.r
		r.held += p.n
		l.used += p.n
		r.computed += p.n
		out.tokens += p.n
		if r.need() > 0 {
			continue
		}
		if sampled(&out, r) {
			l.release(r)
			r.done = true
			l.running = remove(l.running, r)
		}
	}
	return out
}

func (l *llamaSim) state() simState {
	return simState{running: len(l.running), waiting: len(l.waiting), usedTokens: l.used,
		usage: float64(l.used) / float64(max(l.total, 1)), steps: l.steps}
}

// resetPrefixCache: llama.cpp keeps no cache across slots to reset; each slot
// reuses only its own last prompt (cache_prompt).
func (l *llamaSim) resetPrefixCache() bool { return true }
