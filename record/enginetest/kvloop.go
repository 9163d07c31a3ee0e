package enginetest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// simLoop runs a step scheduler in time: one goroutine takes a step, sleeps the
// step's duration, then hands out the tokens it produced, as an engine's forward
// pass returns its batch's tokens at once.
type simLoop struct {
	cfg  *Config
	mu   sync.Mutex
	sim  kvSim
	wake chan struct{} // a request was added while the loop idled
	// Tokens this engine prefilled (first admissions) and generated.
	promptTokens, genTokens atomic.Int64
}

func newSimLoop(cfg *Config) *simLoop {
	return &simLoop{cfg: cfg, sim: newKVSim(cfg), wake: make(chan struct{}, 1)}
}

// submit queues r and wakes the loop.
func (l *simLoop) submit(r *simReq) {
	l.mu.Lock()
	l.sim.add(r)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// cancel takes r out of the scheduler (its client went away), freeing its KV at
// the next step.
func (l *simLoop) cancel(r *simReq) {
	l.mu.Lock()
	if !r.done {
		l.sim.cancel(r)
	}
	l.mu.Unlock()
}

// score is how loaded the engine is, as vLLM's data-parallel load balancer counts.
func (l *simLoop) score() int {
	st := l.state()
	return st.waiting*4 + st.running
}

func (l *simLoop) state() simState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sim.state()
}

// run steps until ctx is done.
func (l *simLoop) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		l.mu.Lock()
		for l.sim.idle() {
			l.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-l.wake:
			}
			l.mu.Lock()
		}
		out := l.sim.step()
		waiting := l.sim.state().waiting
		l.mu.Unlock()
		for _, r := range out.admitted {
			l.promptTokens.Add(int64(r.prompt))
			if r.onAdmit != nil {
				r.onAdmit()
			}
		}
		l.genTokens.Add(int64(len(out.emitted)))
		d := l.cfg.slowed(l.cfg.stepDuration(out.tokens, waiting))
		if out.tokens == 0 {
			d = max(d, time.Millisecond) // a step that could do nothing: do not spin
		}
		if !sleepCtx(ctx, timer, d) {
			return
		}
		for _, r := range out.emitted {
			select {
			case r.tokens <- struct{}{}:
			default: // cannot happen: a request samples at most maxOut tokens
			}
		}
		for _, r := range out.failed {
			close(r.end)
		}
	}
}
