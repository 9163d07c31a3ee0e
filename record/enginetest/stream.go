package enginetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Words the engine generates; each is one token for CountTokens.
const (
	contentWord   = "tok "
	reasoningWord = "think "
)

// generation is one accepted completion request being served.
type generation struct {
	s         *Server
	entry     *RequestLog
	ep        endpoint
	fault     Fault
	prompt    int      // prompt tokens
	ids       []uint32 // the prompt's token ids, with prefix caching
	output    int      // tokens to generate
	reasoning int      // of which the first ones are reasoning
	usage     bool     // send usage
	// continuous: usage on every chunk (vLLM stream_options.continuous_usage_stats).
	continuous bool
	// usageOnFinish: usage rides on the finish chunk instead of a chunk of its own
	// (llama.cpp's completions endpoint).
	usageOnFinish bool
	finish        string // finish_reason
	id            string
	created       int64
	chunkTime     bool

	// Progress, written only by the serving goroutine and copied to entry at the end.
	sentTokens    int
	held          int // tokens counted in Server.kvHeld for this request
	sentReasoning int
	chunks        int
	first, last   time.Time
	chunkTimes    []time.Time

	// With a step scheduler: the request inside it, and tokens handed out but not
	// yet written.
	sr      *simReq
	loop    *simLoop
	simHave int
	// status overrides the HTTP status logged (a step scheduler's failure).
	status int
}

// encoder builds the SSE event bytes of one stream. Every event of a stream shares
// the same head (id, object, created, model), so it is encoded once.
type encoder struct {
	head []byte // `data: {"id":...,"model":...,"choices":`
	eol  string
	ep   endpoint
	// reasoningKey is the delta field of reasoning text.
	reasoningKey string
}

func (g *generation) encoder(eol string) *encoder {
	e := &encoder{eol: eol, ep: g.ep, reasoningKey: g.s.cfg.ReasoningField}
	var b bytes.Buffer
	if g.ep == endpointChat {
		b.WriteString(`data: {"id":"chatcmpl-`)
		b.WriteString(g.id)
		b.WriteString(`","object":"chat.completion.chunk","created":`)
	} else {
		b.WriteString(`data: {"id":"cmpl-`)
		b.WriteString(g.id)
		b.WriteString(`","object":"text_completion","created":`)
	}
	b.WriteString(strconv.FormatInt(g.created, 10))
	b.WriteString(`,"model":`)
	b.Write(g.s.modelJSON)
	b.WriteString(`,"choices":`)
	e.head = b.Bytes()
	return e
}

// event returns head + rest + "}" + blank line.
func (e *encoder) event(rest string) []byte {
	b := make([]byte, 0, len(e.head)+len(rest)+1+2*len(e.eol))
	b = append(b, e.head...)
	b = append(b, rest...)
	b = append(b, '}')
	b = append(b, e.eol...)
	b = append(b, e.eol...)
	return b
}

// withUsage appends the usage field to an event's choices: u is a usage object, or
// "" for none (the completions endpoint then says "usage":null, as vLLM does).
func (e *encoder) withUsage(choices, u string) []byte {
	switch {
	case u != "":
		return e.event(choices + `,"usage":` + u)
	case e.ep == endpointCompletions:
		return e.event(choices + `,"usage":null`)
	}
	return e.event(choices)
}

func (e *encoder) role(u string) []byte {
	return e.withUsage(`[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`, u)
}

// tokens is an event carrying n generated words (reasoning or answer).
func (e *encoder) tokens(n int, reasoning bool, u string) []byte {
	switch {
	case e.ep == endpointCompletions:
		return e.withUsage(`[{"index":0,"text":"`+strings.Repeat(contentWord, n)+`","logprobs":null,"finish_reason":null,"stop_reason":null}]`, u)
	case reasoning:
		return e.withUsage(`[{"index":0,"delta":{"`+e.reasoningKey+`":"`+strings.Repeat(reasoningWord, n)+`"},"logprobs":null,"finish_reason":null}]`, u)
	}
	return e.withUsage(`[{"index":0,"delta":{"content":"`+strings.Repeat(contentWord, n)+`"},"logprobs":null,"finish_reason":null}]`, u)
}

func (e *encoder) finish(reason, u string) []byte {
	if e.ep == endpointCompletions {
		return e.withUsage(`[{"index":0,"text":"","logprobs":null,"finish_reason":"`+reason+`","stop_reason":null}]`, u)
	}
	return e.withUsage(`[{"index":0,"delta":{},"logprobs":null,"finish_reason":"`+reason+`","stop_reason":null}]`, u)
}

func usageJSON(prompt, completion, reasoning, cached int, chat bool) string {
	u := `{"prompt_tokens":` + strconv.Itoa(prompt) +
		`,"total_tokens":` + strconv.Itoa(prompt+completion) +
		`,"completion_tokens":` + strconv.Itoa(completion) +
		`,"prompt_tokens_details":{"cached_tokens":` + strconv.Itoa(cached) + `}`
	if chat {
		u += `,"completion_tokens_details":{"reasoning_tokens":` + strconv.Itoa(reasoning) + `}`
	}
	return u + "}"
}

// usage is the usage-only event (empty choices) that ends a vLLM stream.
func (e *encoder) usage(u string) []byte {
	return e.event(`[],"usage":` + u)
}

// cachedTokens is the prompt tokens the prefix cache served (0 without one).
func (g *generation) cachedTokens() int {
	if g.sr == nil {
		return 0
	}
	return int(g.sr.cached.Load())
}

// runningUsage is the per-chunk usage of continuous_usage_stats ("" when off).
func (g *generation) runningUsage(completion int) string {
	if !g.continuous {
		return ""
	}
	return `{"prompt_tokens":` + strconv.Itoa(g.prompt) + `,"total_tokens":` + strconv.Itoa(g.prompt+completion) +
		`,"completion_tokens":` + strconv.Itoa(completion) + `}`
}

// malformed is an event whose JSON is cut short.
func (e *encoder) malformed() []byte {
	b := append([]byte(nil), e.head...)
	b = append(b, `[{"index":0,"delta":{"content":"tok`...)
	b = append(b, e.eol...)
	b = append(b, e.eol...)
	return b
}

func errorEvent(eol string) []byte {
	return []byte(`data: {"error":{"message":"injected mid-stream error","type":"InternalServerError","param":null,"code":500}}` + eol + eol)
}

// chunkPlan splits the output into token chunks: reasoning chunks first, then
// answer chunks, each of TokensPerChunk tokens except the last of each kind.
type chunkPlan struct {
	per, reasoning, content int
	nReasoning, n           int
}

func (g *generation) plan() chunkPlan {
	per := g.s.cfg.TokensPerChunk
	p := chunkPlan{per: per, reasoning: g.reasoning, content: g.output - g.reasoning}
	p.nReasoning = (p.reasoning + per - 1) / per
	p.n = p.nReasoning + (p.content+per-1)/per
	return p
}

// size returns the token count of chunk i and whether it is reasoning.
func (p chunkPlan) size(i int) (int, bool) {
	if i < p.nReasoning {
		return min(p.per, p.reasoning-i*p.per), true
	}
	j := i - p.nReasoning
	return min(p.per, p.content-j*p.per), false
}

// chunkCache holds the encoded token events of one stream: at most a full and a
// partial chunk of each kind.
type chunkCache struct {
	enc *encoder
	m   [2]map[int][]byte
}

func (c *chunkCache) get(n int, reasoning bool) []byte {
	k := 0
	if reasoning {
		k = 1
	}
	if c.m[k] == nil {
		c.m[k] = make(map[int][]byte, 2)
	}
	b, ok := c.m[k][n]
	if !ok {
		b = c.enc.tokens(n, reasoning, "")
		c.m[k][n] = b
	}
	return b
}

// acquire queues for a slot, then marks the slot's time in the log.
func (g *generation) acquire(ctx context.Context) (release func(), ok bool) {
	kv := g.prompt + g.output
	if err := g.s.sched.acquire(ctx, kv); err != nil {
		return nil, false
	}
	now := time.Now()
	g.s.update(func() { g.entry.SlotAcquired = now })
	g.s.promptTokensTotal.Add(int64(g.prompt))
	g.hold(g.prompt)
	return func() {
		g.s.kvHeld.Add(-int64(g.held))
		g.s.sched.release(kv)
	}, true
}

// sent accounts one token chunk written at time t.
func (g *generation) sent(t time.Time, n int, reasoning bool) {
	if g.chunks == 0 {
		g.first = t
		g.s.update(func() { g.entry.FirstTokenSent = t })
		g.s.ttft.observe(t.Sub(g.entry.Received))
	}
	g.last = t
	g.chunks++
	g.sentTokens += n
	if reasoning {
		g.sentReasoning += n
	}
	if g.chunkTime {
		g.chunkTimes = append(g.chunkTimes, t)
	}
	g.s.generationTokensTotal.Add(int64(n))
	g.hold(n)
}

// hold counts n more tokens in the KV cache for this request (its prompt, then each
// token generated), as a real server's KV usage grows while it decodes.
func (g *generation) hold(n int) {
	g.held += n
	g.s.kvHeld.Add(int64(n))
}

// done copies the progress into the log.
func (g *generation) done(completed bool, aborted string) {
	if completed {
		g.s.requestsOK.Add(1)
	}
	g.s.update(func() {
		e := g.entry
		e.FirstTokenSent = g.first
		e.LastTokenSent = g.last
		e.OutputTokens = g.sentTokens
		e.ReasoningTokens = g.sentReasoning
		e.Chunks = g.chunks
		e.ChunkTimes = g.chunkTimes
		e.Completed = completed
		e.Aborted = aborted
		if completed || g.chunks == g.plan().n {
			e.FinishReason = g.finish
		}
	})
}

// stream serves the request as Server-Sent Events.
func (g *generation) stream(ctx context.Context, w http.ResponseWriter) {
	s := g.s
	eol := "\n"
	if g.fault == FaultCRLF {
		eol = "\r\n"
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	if g.fault == FaultGzip {
		g.gzipStream(w)
		return
	}
	ttft, gap := s.cfg.slowed(s.cfg.TTFT), s.cfg.TokenGap
	if s.sim != nil {
		ttft, gap = 0, 0
		g.simStart()
		defer g.loop.cancel(g.sr)
		if s.cfg.Kind == "llamacpp" {
			// llama.cpp answers with its first result: a failure before the first
			// token is a plain HTTP error, not a stream.
			failed, ok := g.simReady(ctx, 1)
			if failed {
				h.Set("Content-Type", "application/json")
				h.Del("Cache-Control")
				g.status = http.StatusInternalServerError
				writeError(w, g.status, "server_error", g.sr.failMsg)
				g.done(false, "kv")
				return
			}
			if !ok {
				g.done(false, s.abortReason())
				return
			}
		}
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if g.fault == FaultCRLF {
		_, _ = w.Write([]byte(": keep-alive\r\n\r\n"))
	}
	// Headers go out before the request waits for a slot, as an ASGI server sends
	// them before the body generator yields.
	if err := rc.Flush(); err != nil {
		g.done(false, s.abortReason())
		return
	}

	if s.sim == nil {
		release, ok := g.acquire(ctx)
		if !ok {
			g.done(false, s.abortReason())
			return
		}
		defer release()
	}

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	start := time.Now()
	t0 := start.Add(ttft)
	if !sleepCtx(ctx, timer, ttft) {
		g.done(false, s.abortReason())
		return
	}
	// Pace from the planned first-token time so gaps do not drift with scheduling
	// delays; with TokenGap == 0 the loop runs without timers.
	if now := time.Now(); now.After(t0) {
		t0 = now
	}

	enc := g.encoder(eol)
	cache := chunkCache{enc: enc}
	p := g.plan()
	if g.chunkTime {
		g.chunkTimes = make([]time.Time, 0, p.n)
	}
	mid := max(p.n/2, 1)
	var pending []byte // events to send with the next token chunk
	if g.ep == endpointChat {
		pending = enc.role(g.runningUsage(0))
	}
	for i := 0; i <= p.n; i++ {
		if i == mid {
			switch g.fault {
			case FaultResetMidStream:
				_ = rc.Flush()
				if conn, _, err := rc.Hijack(); err == nil {
					resetConn(conn)
				}
				g.done(false, "fault")
				return
			case FaultStall:
				<-ctx.Done()
				g.done(false, s.abortReason())
				return
			case FaultErrorEvent:
				_, _ = w.Write(errorEvent(eol))
				_ = rc.Flush()
				g.done(false, "fault")
				return
			case FaultMalformedChunk:
				pending = append(pending, enc.malformed()...)
			case FaultKeepAlive:
				keepAlive(ctx, w, rc, eol)
				g.done(false, s.abortReason())
				return
			}
		}
		if i == p.n {
			break
		}
		n, reasoning := p.size(i)
		if s.sim != nil {
			failed, ok := g.simReady(ctx, n)
			if failed {
				_, _ = w.Write(append(pending, g.simFailEvent(eol)...))
				_ = rc.Flush()
				g.done(false, "kv")
				return
			}
			if !ok {
				g.done(false, s.abortReason())
				return
			}
			g.simHave -= n
		}
		if i > 0 && s.sim == nil {
			// Each gap as the batch is now (DecodeBatch, BatchGap), added to the
			// planned time of the token before.
			gap = s.tokenGap()
			t0 = t0.Add(gap)
		}
		if gap > 0 && i > 0 {
			if !sleepCtx(ctx, timer, time.Until(t0)) {
				g.done(false, s.abortReason())
				return
			}
		} else if ctx.Err() != nil {
			g.done(false, s.abortReason())
			return
		}
		var buf []byte
		if g.continuous {
			buf = enc.tokens(n, reasoning, g.runningUsage(g.sentTokens+n))
		} else {
			buf = cache.get(n, reasoning)
		}
		if g.fault == FaultCRLF && i%4 == 3 {
			pending = append(pending, ": keep-alive\r\n\r\n"...)
		}
		if len(pending) > 0 {
			buf = append(pending, buf...)
			pending = pending[:0]
		}
		t := time.Now()
		_, err := w.Write(buf)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			g.done(false, s.abortReason())
			return
		}
		g.sent(t, n, reasoning)
	}

	total := usageJSON(g.prompt, g.sentTokens, g.sentReasoning, g.cachedTokens(), g.ep == endpointChat)
	var tail []byte
	switch g.fault {
	case FaultHugeUsage:
		total = usageJSON(g.prompt, 3_000_000_000, 0, 0, g.ep == endpointChat)
	case FaultRepeatedUsage:
		tail = enc.usage(usageJSON(g.prompt, 1, 0, 0, g.ep == endpointChat))
	}
	switch {
	case g.usageOnFinish && g.usage:
		tail = enc.finish(g.finish, total)
	case g.continuous:
		tail = append(enc.finish(g.finish, g.runningUsage(g.sentTokens)), enc.usage(total)...)
	case g.usage:
		tail = append(append(tail, enc.finish(g.finish, "")...), enc.usage(total)...)
	default:
		tail = enc.finish(g.finish, "")
	}
	if g.fault != FaultNoDone {
		tail = append(tail, "data: [DONE]"+eol+eol...)
	}
	_, err := w.Write(tail)
	if err == nil {
		err = rc.Flush()
	}
	if err != nil {
		g.done(false, s.abortReason())
		return
	}
	g.done(true, "")
}

// plain serves a non-streaming request: the same timing, then one JSON body.
func (g *generation) plain(ctx context.Context, w http.ResponseWriter) {
	s := g.s
	p := g.plan()
	var d time.Duration
	if s.sim != nil {
		g.simStart()
		defer g.loop.cancel(g.sr)
		failed, ok := g.simReady(ctx, g.output)
		if failed {
			g.status = http.StatusInternalServerError
			writeError(w, g.status, "server_error", g.sr.failMsg)
			g.done(false, "kv")
			return
		}
		if !ok {
			g.done(false, s.abortReason())
			return
		}
	} else {
		release, ok := g.acquire(ctx)
		if !ok {
			g.done(false, s.abortReason())
			return
		}
		defer release()
		d = s.cfg.TTFT
		if p.n > 1 {
			d += time.Duration(p.n-1) * s.tokenGap()
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if !sleepCtx(ctx, timer, d) {
		g.done(false, s.abortReason())
		return
	}
	switch g.fault {
	case FaultResetMidStream:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			resetConn(conn)
		}
		g.done(false, "fault")
		return
	case FaultStall:
		<-ctx.Done()
		g.done(false, s.abortReason())
		return
	case FaultErrorEvent:
		writeError(w, http.StatusInternalServerError, "InternalServerError", "injected error")
		g.done(false, "fault")
		return
	}
	content := strings.Repeat(contentWord, g.output-g.reasoning)
	var body string
	if g.ep == endpointChat {
		msg := `{"role":"assistant","content":"` + content + `"`
		if g.reasoning > 0 {
			msg += `,"` + s.cfg.ReasoningField + `":"` + strings.Repeat(reasoningWord, g.reasoning) + `"`
		}
		msg += "}"
		body = `{"id":"chatcmpl-` + g.id + `","object":"chat.completion","created":` + strconv.FormatInt(g.created, 10) +
			`,"model":` + string(s.modelJSON) +
			`,"choices":[{"index":0,"message":` + msg + `,"logprobs":null,"finish_reason":"` + g.finish + `","stop_reason":null}]`
	} else {
		body = `{"id":"cmpl-` + g.id + `","object":"text_completion","created":` + strconv.FormatInt(g.created, 10) +
			`,"model":` + string(s.modelJSON) +
			`,"choices":[{"index":0,"text":"` + content + `","logprobs":null,"finish_reason":"` + g.finish + `","stop_reason":null}]`
	}
	if g.usage {
		body += `,"usage":` + usageJSON(g.prompt, g.output, g.reasoning, g.cachedTokens(), g.ep == endpointChat)
	}
	body += "}"
	if g.fault == FaultMalformedChunk {
		body = body[:len(body)/2]
	}
	w.Header().Set("Content-Type", "application/json")
	t := time.Now()
	_, err := w.Write([]byte(body))
	if err != nil {
		g.done(false, s.abortReason())
		return
	}
	g.first, g.last = t, t
	s.ttft.observe(t.Sub(g.entry.Received))
	g.chunks = 1
	g.sentTokens, g.sentReasoning = g.output, g.reasoning
	s.generationTokensTotal.Add(int64(g.output))
	g.hold(g.output)
	if g.chunkTime {
		g.chunkTimes = []time.Time{t}
	}
	g.done(true, "")
}

// keepAlive sends SSE comments until the client goes away: a stream that is alive
// by bytes but carries no more tokens.
func keepAlive(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, eol string) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if _, err := w.Write([]byte(": keep-alive" + eol + eol)); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// gzipStream sends a short complete stream compressed, as a misconfigured proxy
// does whatever the client asked for.
func (g *generation) gzipStream(w http.ResponseWriter) {
	enc := g.encoder("\n")
	var raw bytes.Buffer
	raw.Write(enc.tokens(1, false, ""))
	raw.Write(enc.finish(g.finish, ""))
	raw.WriteString("data: [DONE]\n\n")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(raw.Bytes())
	_ = zw.Close()
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(z.Bytes())
	g.done(false, "fault")
}

// tokenGap is the gap before the next token with the batch running now:
// Config.TokenGap, plus Config.BatchGap for each request past Config.DecodeBatch.
func (s *Server) tokenGap() time.Duration {
	if s.cfg.BatchGap <= 0 {
		return s.cfg.slowed(s.cfg.TokenGap)
	}
	running, _, _ := s.sched.state()
	return s.cfg.slowed(s.cfg.TokenGap + time.Duration(max(0, running-s.cfg.DecodeBatch))*s.cfg.BatchGap)
}
