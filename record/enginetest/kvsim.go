package enginetest

// The step schedulers' common state. A kvSim is a deterministic state machine: add
// queues a request, step runs one engine step and says what it did. It knows no
// time and no HTTP; the engine loop (kvloop.go) paces the steps and delivers the
// tokens, and tests drive step directly.

// simReq is one request inside a step scheduler.
type simReq struct {
	id     int64
	prompt int // prompt tokens
	maxOut int // tokens to generate
	// generated counts the tokens sampled so far; they stay sent to the client when
	// the request is preempted, and are recomputed with the prompt when it resumes.
	generated int
	computed  int // tokens whose KV is computed and held now
	held      int // KV held: blocks (vLLM) or tokens (SGLang, llama.cpp)
	admitted  bool
	preempted int // times preempted or retracted
	canceled  bool
	done      bool // finished, failed or canceled: out of every queue

	// Delivery, used by the engine loop and the request's handler.
	tokens  chan struct{} // one per generated token; capacity maxOut
	end     chan struct{} // closed when the request failed
	failMsg string        // set before end is closed
	onAdmit func()        // called once by the loop after the first admission
}

func newSimReq(id int64, prompt, maxOut int) *simReq {
	return &simReq{id: id, prompt: prompt, maxOut: maxOut,
		tokens: make(chan struct{}, maxOut), end: make(chan struct{})}
}

// need is the number of tokens still to compute before the next one is sampled.
func (r *simReq) need() int { return r.prompt + r.generated - r.computed }

// stepOut is what one step did.
type stepOut struct {
	tokens    int       // tokens computed: prefill, recompute and decode
	emitted   []*simReq // each sampled one new token
	admitted  []*simReq // admitted for the first time
	failed    []*simReq // failed by the engine (failMsg set)
	preempted int       // requests preempted or retracted
}

// simState is what /metrics shows of a step scheduler.
type simState struct {
	running, waiting int
	usedTokens       int     // KV tokens held (blocks × block size for vLLM)
	usage            float64 // KV usage, 0..1, as the engine reports it
	preemptionsTotal int64   // preempted (vLLM) or retracted (SGLang) so far
	retractedRecent  int     // SGLang's gauge
	steps            int64   // steps that computed something (llama.cpp's n_decode_total)
}

// kvSim is a step scheduler.
type kvSim interface {
	add(r *simReq)
	step() stepOut
	cancel(r *simReq)
	idle() bool
	state() simState
}

// newKVSim builds the step scheduler cfg names (cfg checked by checkScheduler).
func newKVSim(cfg *Config) kvSim {
	switch cfg.Scheduler {
	case SchedulerVLLM:
		v := newVLLMSim(cfg.KVTokens, cfg.Slots, cfg.MaxBatchedTokens, cfg.Watermark)
		if cfg.HostKVTokens > 0 {
			return newOffloadSim(v, cfg.HostKVTokens) // kvsim_offload.go
		}
		return v
	case SchedulerSGLang:
		return newSGLangSim(cfg.KVTokens, cfg.Slots, cfg.MaxBatchedTokens)
	case SchedulerLlamaUnified, SchedulerLlamaSlots:
		return newLlamaSim(cfg.KVTokens, cfg.Slots, cfg.MaxBatchedTokens, cfg.Scheduler == SchedulerLlamaUnified)
	}
	return nil
}

// queues are the running and waiting requests of a step scheduler.
type queues struct {
	running []*simReq
	waiting []*simReq
}

func (q *queues) idle() bool { return len(q.running) == 0 && len(q.waiting) == 0 }

// remove deletes r from list, keeping the order.
func remove(list []*simReq, r *simReq) []*simReq {
	for i, x := range list {
		if x == r {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// dropCanceled takes canceled requests out of both queues, calling free on each.
func (q *queues) dropCanceled(free func(*simReq)) {
	keep := func(list []*simReq) []*simReq {
		out := list[:0]
		for _, r := range list {
			if r.canceled {
				free(r)
				r.done = true
				continue
			}
			out = append(out, r)
		}
		return out
	}
	q.running = keep(q.running)
	q.waiting = keep(q.waiting)
}

// sampled accounts the token sampled when r's computation caught up: it is emitted,
// and r finishes when it has all its tokens.
func sampled(out *stepOut, r *simReq) (finished bool) {
	r.generated++
	out.emitted = append(out.emitted, r)
	return r.generated >= r.maxOut
}
