package enginetest

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// A completion request served by a step scheduler: the handler submits it, then
// waits for the tokens the engine loop hands out, instead of pacing itself.

// simStart submits g to the least loaded step scheduler (the first on a tie); the
// caller must call g.loop.cancel(g.sr) when the handler ends.
func (g *generation) simStart() {
	s := g.s
	r := newSimReq(g.entry.Index, g.prompt, g.output)
	r.ids = g.ids
	r.onAdmit = func() {
		now := time.Now()
		s.update(func() { g.entry.SlotAcquired = now })
		s.promptTokensTotal.Add(int64(g.prompt))
	}
	g.sr = r
	s.dispatchMu.Lock()
	defer s.dispatchMu.Unlock()
	g.loop = s.engines[0]
	best := g.loop.score()
	for _, l := range s.engines[1:] {
		if sc := l.score(); sc < best {
			g.loop, best = l, sc
		}
	}
	g.loop.submit(r)
}

// simReady waits until n tokens are at hand (not yet written). failed: the engine
// failed the request (g.sr.failMsg says why); !ok without failed: ctx ended.
func (g *generation) simReady(ctx context.Context, n int) (failed, ok bool) {
	r := g.sr
	for g.simHave < n {
		select {
		case <-r.tokens:
			g.simHave++
		case <-r.end:
			// Tokens handed out before the failure still count.
			for drained := false; !drained && g.simHave < n; {
				select {
				case <-r.tokens:
					g.simHave++
				default:
					drained = true
				}
			}
			if g.simHave >= n {
				return false, true
			}
			return true, false
		case <-ctx.Done():
			return false, false
		}
	}
	return false, true
}

// simFailEvent is the mid-stream error event of a request the engine failed, as
// llama.cpp's server formats it.
func (g *generation) simFailEvent(eol string) []byte {
	return []byte(`data: {"error":{"code":500,"message":"` + g.sr.failMsg + `","type":"server_error"}}` + eol + eol)
}

// simRefuse checks a request against the step scheduler's cache before it is
// queued, as the engine would refuse it; it writes the refusal and returns its
// status, or 0 when the request may run. It shortens g.output where a llama.cpp
// slot's context ends first.
func (g *generation) simRefuse(w http.ResponseWriter) (status int) {
	s := g.s
	switch s.cfg.Scheduler {
	case SchedulerLlamaUnified, SchedulerLlamaSlots:
		nctx := s.cfg.slotContext()
		if g.prompt >= nctx {
			writeError(w, http.StatusBadRequest, "exceed_context_size_error",
				"request ("+strconv.Itoa(g.prompt)+" tokens) exceeds the available context size ("+strconv.Itoa(nctx)+" tokens), try increasing it")
			return http.StatusBadRequest
		}
		// Context shift is off: generation stops where the slot's context ends.
		if g.prompt+g.output > nctx {
			g.output = nctx - g.prompt
			g.reasoning = min(g.reasoning, g.output)
			g.finish = "length"
		}
	case SchedulerVLLM, SchedulerSGLang:
		tooBig := blocksFor(g.prompt+g.output) > s.cfg.KVTokens/blockSize // vLLM: more blocks than the cache
		if s.cfg.Scheduler == SchedulerSGLang {
			tooBig = g.prompt+g.output >= s.cfg.KVTokens
		}
		if tooBig {
			writeError(w, http.StatusBadRequest, "BadRequestError",
				"This model's maximum context length is "+strconv.Itoa(s.cfg.KVTokens)+" tokens. However, you requested "+
					strconv.Itoa(g.prompt+g.output)+" tokens ("+strconv.Itoa(g.prompt)+" in the messages, "+strconv.Itoa(g.output)+
					" in the completion). Please reduce the length of the messages or completion.")
			return http.StatusBadRequest
		}
	}
	return 0
}
