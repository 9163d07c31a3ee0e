// Package enginetest provides an in-process OpenAI-compatible LLM server for tests,
// in the spirit of net/http/httptest: it streams chat and text completions the way
// vLLM does, with configurable time to first token, inter-token gap, tokens per chunk,
// reasoning tokens, a slot limit and a KV token budget (requests beyond them queue in
// FIFO order), probe endpoints imitating vLLM, llama.cpp or SGLang, and per-request
// fault injection. It logs what it actually did for every completion request (when it
// received it, when it got a slot, when each token chunk was sent), so tests can
// check a recorder's measurements against the truth.
//
// Streams follow vLLM: a role chunk, token chunks, a finish chunk, with
// stream_options.include_usage a usage chunk with empty choices (with
// continuous_usage_stats also usage on every chunk), then data: [DONE]. With Kind
// "llamacpp" the completions endpoint puts usage on the finish chunk instead, as
// llama.cpp does. Prompt tokens are counted with CountTokens (words); the output is
// always max_tokens words ("think " for reasoning, "tok " for the answer).
//
// The engine is built to hold thousands of concurrent streams on a small machine:
// chunk bytes are encoded once per request, each chunk is one Write and one Flush,
// and with TokenGap == 0 streams write without timers.
package enginetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes the engine to imitate. The zero value is a usable generic engine.
type Config struct {
	Model          string        // served model id (default "test-model"); /v1/models lists it
	MaxModelLen    int           // reported in /v1/models as max_model_len (vLLM style); 0 = 4096. When set (> 0), prompt+max_tokens above it is refused with 400 as vLLM does.
	TTFT           time.Duration // prefill time once the request holds a slot
	TokenGap       time.Duration // time between token chunks (0 = as fast as possible)
	TokensPerChunk int           // tokens per content chunk (default 1)
	// ReasoningTokens: the first N output tokens of a chat completion are sent as
	// reasoning deltas (the completions endpoint has no reasoning).
	ReasoningTokens int
	ReasoningField  string // "reasoning_content" (default) or "reasoning"
	Slots           int    // concurrent requests served; more queue FIFO (0 = unlimited)
	// DecodeBatch and BatchGap make the token gap grow with the batch, as a GPU's
	// decode step does (the roofline): memory-bound, reading the weights whatever
	// the batch, up to DecodeBatch running requests; past it each further request
	// adds its compute, BatchGap, to every step. The gap before each token is
	// TokenGap + BatchGap × max(0, running − DecodeBatch). Throughput grows in
	// proportion up to DecodeBatch, then by little: a knee without a slot cap.
	// BatchGap 0: a fixed gap. (The step schedulers have StepTime and TokenTime.)
	DecodeBatch int
	BatchGap    time.Duration
	// KVTokens is the total KV token budget: prompt+max_tokens of the running
	// requests; a request waits until it fits (0 = unlimited). A request larger than
	// the whole budget runs alone.
	KVTokens int
	// Kind selects the server imitated on the probe endpoints, or "" for a generic
	// server with no probe endpoints (/metrics is 404):
	//   - "vllm": /metrics (vllm:* with cache_config_info, running/waiting gauges, KV
	//     usage, token counters, a TTFT histogram; running = requests holding a slot,
	//     waiting = the queue, KV usage = tokens held (prompt + generated so far) /
	//     KV capacity, as vLLM's gauge grows while requests decode), POST /tokenize {"model","prompt"}
	//     → {"count",...}; /v1/models owned_by "vllm".
	//   - "llamacpp": /props (default_generation_settings.n_ctx = MaxModelLen per slot,
	//     total_slots), /slots, /metrics (llamacpp:*), POST /tokenize {"content"} →
	//     {"tokens"}; owned_by "llamacpp".
	//   - "sglang": /get_server_info (max_total_num_tokens = KVTokens), /metrics
	//     (sglang:*); owned_by "sglang".
	// Unlimited KVTokens is reported as 1<<20 tokens.
	Kind string
	// Version is the server version reported where the imitated server reports one:
	// llama.cpp /props build_info and SGLang /get_server_info version (default
	// "enginetest"), and vLLM GET /version (only when set), so tests can present a
	// real version string.
	Version string
	// APIKey, when set, makes requests without "Authorization: Bearer <key>" get 401.
	APIKey string
	// IgnoreUsageOption: never send usage (a server without include_usage).
	IgnoreUsageOption bool
	// DefaultOutputTokens is the output length when the request has no max_tokens
	// (default 16).
	DefaultOutputTokens int
	// Fault picks a fault for each request (nil = none). The index counts POSTs to
	// the completion endpoints from 0, in arrival order. It is called from many
	// goroutines at once.
	Fault func(requestIndex int64) Fault
	// RedirectURL is where FaultRedirect points (the request path is appended).
	RedirectURL string
	// RecordChunkTimes keeps each token chunk's send time in the log (costly).
	RecordChunkTimes bool

	// Scheduler picks how requests share the KV cache (profile.go): "" reserves
	// prompt+max_tokens at admission (never full, never preempting); "vllm",
	// "sglang", "llamacpp-unified" and "llamacpp-slots" run a step-by-step engine
	// that fills its cache of KVTokens and then preempts, retracts or fails as that
	// engine does. Kind defaults to the engine imitated. With a step scheduler,
	// Slots is max_num_seqs (vLLM, default 256), max_running_requests (SGLang) or
	// the slot count (llama.cpp, default 1), and TTFT and TokenGap are unused.
	Scheduler string
	// HostKVTokens gives the vLLM scheduler a CPU KV offload tier of that many
	// tokens, as vLLM's OffloadingConnector (kvsim_offload.go): a preempted
	// request's KV is stored there and loaded back when it resumes, and /metrics
	// adds the connector's series. 0 = none.
	HostKVTokens int
	// StepTime and TokenTime make a step scheduler's step last StepTime plus
	// TokenTime per token it computes (defaults 2ms, 10µs and 1µs of WaitingTime
	// when all three are 0).
	StepTime, TokenTime time.Duration
	// WaitingTime is added to a step for each request waiting in the engine: the
	// cost of a long queue (profile.go). 0 = none.
	WaitingTime time.Duration
	// MaxBatchedTokens bounds the tokens a step computes: vLLM's
	// max_num_batched_tokens and SGLang's chunked_prefill_size (default 8192),
	// llama.cpp's n_batch (default 2048).
	MaxBatchedTokens int
	// Watermark is the share of vLLM's blocks kept free when admitting (default 0.01).
	Watermark float64
	// DataParallel runs that many vLLM engines (data parallel), each with its own
	// KVTokens cache and Slots, requests going to the least loaded (waiting × 4 +
	// running, as vLLM's DP load balancer scores them); /metrics has one series per
	// engine="N". 0 = 1.
	DataParallel int
	// Noise slows every token gap and step by a factor from [1, 1+Noise) that
	// changes every NoisePeriod (default 500ms), drawn from NoiseSeed: the
	// interference of a busy machine (noise.go). 0 = none.
	Noise       float64
	NoisePeriod time.Duration
	NoiseSeed   uint64

	started time.Time // when the engine started: the clock of Noise
}

// Fault is a misbehaviour injected into one request.
type Fault int

// The faults. Mid-stream faults strike before the token chunk at half the stream
// (after at least one token chunk).
const (
	FaultNone            Fault = iota
	FaultUnauthorized          // 401 JSON error
	FaultModelNotFound         // 404 {"error":{"message":"The model ... does not exist.",...}}
	FaultTooManyRequests       // 429 JSON error
	FaultInternal              // 500 JSON error
	FaultUnavailable           // 503 JSON error
	FaultResetMidStream        // some chunks, then the TCP connection is reset (SO_LINGER 0)
	FaultMalformedChunk        // one extra chunk of broken JSON mid-stream, then the stream goes on
	FaultStall                 // some chunks, then nothing until the client gives up or the server closes
	FaultErrorEvent            // mid-stream `data: {"error":{...}}`, then the stream ends without [DONE]
	FaultNoDone                // normal stream without `data: [DONE]`
	FaultCRLF                  // normal stream framed with CRLF and `: keep-alive` comment lines
	// Faults of hostile or misconfigured servers (issue 8).
	FaultEchoAuth      // 500 whose error message echoes the request's Authorization header
	FaultBadUTF8       // 500 whose error message holds bytes that are not UTF-8
	FaultRedirect      // 307 to Config.RedirectURL + the request path
	FaultHTML          // 200 text/html page instead of a stream
	FaultNotStreamed   // 200 non-streaming JSON completion although stream was asked
	FaultGzip          // 200 stream sent with Content-Encoding: gzip
	FaultKeepAlive     // some chunks, then `: keep-alive` comments forever, no more tokens
	FaultHugeUsage     // normal stream whose usage says 3,000,000,000 completion tokens
	FaultRepeatedUsage // normal stream with an early usage chunk (1 token), then the true one
)

var faultNames = [...]string{"none", "unauthorized", "model_not_found", "too_many_requests",
	"internal", "unavailable", "reset_mid_stream", "malformed_chunk", "stall", "error_event",
	"no_done", "crlf", "echo_auth", "bad_utf8", "redirect", "html", "not_streamed", "gzip",
	"keep_alive", "huge_usage", "repeated_usage"}

func (f Fault) String() string {
	if f >= 0 && int(f) < len(faultNames) {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// RequestLog is what the engine did with one completion request.
type RequestLog struct {
	Index    int64
	Endpoint string // "chat" or "completions"
	// RequestID is the request's X-Request-Id header, if any, so a test can match
	// its client's records to the engine's. Streams carry the id
	// "chatcmpl-<Index in hex>" (or "cmpl-...") too.
	RequestID    string
	Received     time.Time // request headers read
	SlotAcquired time.Time // zero if it never got one
	// ChunkTimes holds the send time (just before Write+Flush) of each
	// token-carrying chunk, when Config.RecordChunkTimes is set.
	ChunkTimes     []time.Time
	FirstTokenSent time.Time // zero if no token was sent
	LastTokenSent  time.Time
	Ended          time.Time // handler finished (response complete, aborted or rejected)
	// PromptTokens is CountTokens of the prompt; OutputTokens and ReasoningTokens
	// count the tokens actually sent (what usage reports).
	PromptTokens, OutputTokens, ReasoningTokens int
	MaxTokens                                   int // requested output length (max_tokens, or the default)
	Chunks                                      int // token-carrying chunks sent
	Stream                                      bool
	Fault                                       Fault
	Status                                      int
	Model                                       string
	FinishReason                                string // sent in the finish chunk ("" if the stream never got there)
	// Completed is true when the response was delivered in full (finish chunk,
	// usage when asked, and [DONE] unless the fault omits it).
	Completed bool
	// Aborted says why the stream stopped early: "client" (client went away),
	// "server" (Close or Kill), "fault" (a mid-stream fault ended it), or "kv" (a
	// step scheduler's KV cache was exhausted: llama.cpp's "Context size has been
	// exceeded.").
	Aborted string
}

// Server is a running test engine. Create it with New or Start; stop it with Close
// or Kill.
type Server struct {
	cfg       Config
	modelJSON []byte // the model id as a JSON string
	url       string
	ln        net.Listener
	srv       *http.Server
	sched     scheduler
	sim       *simLoop   // the first step scheduler, nil with Scheduler ""
	engines   []*simLoop // every step scheduler: DataParallel of them (vLLM), else one
	// dispatchMu makes choosing an engine and submitting to it one step, so that
	// requests arriving together spread over the engines.
	dispatchMu sync.Mutex

	base       context.Context // parent of every request context
	cancelBase context.CancelFunc

	logMu sync.Mutex
	log   []*RequestLog

	connMu sync.Mutex
	conns  map[net.Conn]struct{}

	stopMu   sync.Mutex
	stopping bool
	handlers sync.WaitGroup

	promptTokensTotal     atomic.Int64
	generationTokensTotal atomic.Int64
	kvHeld                atomic.Int64 // tokens the running requests hold: prompt + generated so far
	requestsOK            atomic.Int64
	ttft                  histogram
	closeOnce             sync.Once
}

// New starts an engine listening on 127.0.0.1 on a free port. Like
// httptest.NewServer it panics if the engine cannot start (a broken test setup);
// use Start to get an error instead.
func New(cfg Config) *Server {
	s, err := Start(cfg)
	if err != nil {
		panic(fmt.Sprintf("enginetest: %v", err))
	}
	return s
}

// Start validates cfg and starts an engine listening on 127.0.0.1 on a free port.
func Start(cfg Config) (*Server, error) {
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	if cfg.TokensPerChunk <= 0 {
		cfg.TokensPerChunk = 1
	}
	if cfg.DefaultOutputTokens <= 0 {
		cfg.DefaultOutputTokens = 16
	}
	if cfg.ReasoningField == "" {
		cfg.ReasoningField = "reasoning_content"
	}

	switch cfg.ReasoningField {
	case "reasoning_content", "reasoning":
	default:
		return nil, fmt.Errorf("config ReasoningField %q: want \"reasoning_content\" or \"reasoning\"", cfg.ReasoningField)
	}
	switch cfg.Kind {
	case "", "vllm", "llamacpp", "sglang":
	default:
		return nil, fmt.Errorf("config Kind %q: want \"vllm\", \"llamacpp\", \"sglang\" or \"\"", cfg.Kind)
	}
	if err := checkScheduler(&cfg); err != nil {
		return nil, err
	}
	if err := checkOffload(&cfg); err != nil {
		return nil, err
	}
	if cfg.TTFT < 0 || cfg.TokenGap < 0 || cfg.Slots < 0 || cfg.KVTokens < 0 || cfg.MaxModelLen < 0 || cfg.ReasoningTokens < 0 {
		return nil, errors.New("config has a negative duration, count or budget")
	}
	if cfg.Noise < 0 || math.IsNaN(cfg.Noise) || math.IsInf(cfg.Noise, 0) || cfg.NoisePeriod < 0 {
		return nil, fmt.Errorf("config Noise %v or NoisePeriod %v: want a finite share ≥ 0 and a period ≥ 0", cfg.Noise, cfg.NoisePeriod)
	}
	cfg.started = time.Now()
	modelJSON, err := json.Marshal(cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("encoding model id: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s := &Server{
		cfg:       cfg,
		modelJSON: modelJSON,
		url:       "http://" + ln.Addr().String(),
		ln:        ln,
		sched:     scheduler{slots: cfg.Slots, kv: cfg.KVTokens},
		conns:     make(map[net.Conn]struct{}),
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	if cfg.Scheduler != SchedulerReserve {
		for range max(s.cfg.DataParallel, 1) {
			l := newSimLoop(&s.cfg)
			s.engines = append(s.engines, l)
			go l.run(s.base)
		}
		s.sim = s.engines[0]
	}
	s.srv = &http.Server{
		Handler:     s.routes(),
		BaseContext: func(net.Listener) context.Context { return s.base },
		ConnState:   s.trackConn,
		// Many streams are opened at once by load tests; keep header reads bounded
		// but generous.
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          nil,
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the base URL of the engine, e.g. http://127.0.0.1:41234 (without /v1).
func (s *Server) URL() string { return s.url }

// Config returns the configuration in effect (defaults filled in).
func (s *Server) Config() Config { return s.cfg }

// Running and Waiting return the number of requests holding a slot and queued.
func (s *Server) Running() int { r, _, _ := s.load(); return r }

// Waiting returns the number of requests queued for a slot or KV budget.
func (s *Server) Waiting() int { _, w, _ := s.load(); return w }

// load returns the running and waiting counts and the KV usage (0..1) the engine
// reports.
func (s *Server) load() (running, waiting int, kvUsage float64) {
	if s.sim != nil {
		st := s.simTotals()
		return st.running, st.waiting, st.usage
	}
	r, w, _ := s.sched.state()
	return r, w, float64(s.kvHeld.Load()) / float64(s.kvCapacity())
}

// Preemptions returns how many times a step scheduler preempted (vLLM) or
// retracted (SGLang) a request so far.
func (s *Server) Preemptions() int64 {
	if s.sim == nil {
		return 0
	}
	return s.simTotals().preemptionsTotal
}

// simTotals sums the step schedulers' states (KV usage: their mean).
func (s *Server) simTotals() simState {
	var t simState
	for _, l := range s.engines {
		st := l.state()
		t.running += st.running
		t.waiting += st.waiting
		t.usedTokens += st.usedTokens
		t.usage += st.usage / float64(len(s.engines))
		t.preemptionsTotal += st.preemptionsTotal
		t.retractedRecent += st.retractedRecent
		t.steps += st.steps
	}
	return t
}

// Log returns a copy of the request log, one entry per completion request, in
// arrival order. Entries of requests still in flight show their progress so far.
func (s *Server) Log() []RequestLog {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := make([]RequestLog, len(s.log))
	for i, e := range s.log {
		out[i] = *e
		out[i].ChunkTimes = append([]time.Time(nil), e.ChunkTimes...)
	}
	return out
}

// Close stops the engine: in-flight streams end where they are (no finish chunk, no
// [DONE]), queued requests are dropped, and Close returns once every handler has
// returned.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.beginStop()
		s.cancelBase()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.srv.Shutdown(ctx)
		cancel()
		_ = s.srv.Close()
		s.handlers.Wait()
	})
}

// Kill stops the engine abruptly, like a server process killed mid-level: the
// listener and every open connection are closed at once (reset where possible), so
// clients see their streams break without any clean ending.
func (s *Server) Kill() {
	s.closeOnce.Do(func() {
		s.beginStop()
		_ = s.ln.Close()
		s.connMu.Lock()
		for c := range s.conns {
			resetConn(c)
		}
		s.connMu.Unlock()
		s.cancelBase()
		_ = s.srv.Close()
		s.handlers.Wait()
	})
}

func (s *Server) beginStop() {
	s.stopMu.Lock()
	s.stopping = true
	s.stopMu.Unlock()
}

// enter registers a running handler; false once the server is stopping.
func (s *Server) enter() bool {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopping {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	switch st {
	case http.StateNew:
		s.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	}
}

// resetConn closes c so that the peer sees a reset rather than a clean end.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		s.serveCompletion(w, r, endpointChat)
	})
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) {
		s.serveCompletion(w, r, endpointCompletions)
	})
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	switch s.cfg.Kind {
	case "vllm":
		mux.HandleFunc("POST /tokenize", s.serveVLLMTokenize)
		if s.cfg.Version != "" {
			mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"version": s.cfg.Version})
			})
		}
	case "llamacpp":
		mux.HandleFunc("GET /props", s.serveLlamaProps)
		mux.HandleFunc("GET /slots", s.serveLlamaSlots)
		mux.HandleFunc("POST /tokenize", s.serveLlamaTokenize)
	case "sglang":
		mux.HandleFunc("GET /get_server_info", s.serveSGLangInfo)
	}
	return mux
}

// version is the version string reported by /props and /get_server_info.
func (s *Server) version() string {
	if s.cfg.Version != "" {
		return s.cfg.Version
	}
	return "enginetest"
}

// maxModelLen is the context length reported and, when configured, enforced.
func (s *Server) maxModelLen() int {
	if s.cfg.MaxModelLen > 0 {
		return s.cfg.MaxModelLen
	}
	return 4096
}

// writeError sends an OpenAI-style JSON error.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalServerError", "encoding response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
