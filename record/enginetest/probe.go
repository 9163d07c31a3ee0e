package enginetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// blockSize is the KV block size reported by the vLLM imitation.
const blockSize = 16

// unlimitedKVTokens is the KV capacity reported when Config.KVTokens is 0.
const unlimitedKVTokens = 1 << 20

func (s *Server) kvCapacity() int {
	if s.cfg.KVTokens > 0 {
		return s.cfg.KVTokens
	}
	return unlimitedKVTokens
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "AuthenticationError", "Unauthorized: invalid or missing API key")
		return
	}
	// A generic engine names itself; an imitation uses the real server's owner so
	// that kind detection by owned_by sees what it would see in production.
	owner := "enginetest"
	if s.cfg.Kind != "" {
		owner = s.cfg.Kind
	}
	writeJSON(w, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id":            s.cfg.Model,
			"object":        "model",
			"created":       time.Now().Unix(),
			"owned_by":      owner,
			"max_model_len": s.maxModelLen(),
		}},
	})
}

func (s *Server) authorized(r *http.Request) bool {
	return s.cfg.APIKey == "" || r.Header.Get("Authorization") == "Bearer "+s.cfg.APIKey
}

// promLabel escapes a Prometheus label value.
func promLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// serveMetrics writes Prometheus text in the names of the imitated server.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	running, waiting, kvFrac := s.load()
	var st simState
	if s.sim != nil {
		st = s.simTotals()
	}
	prompt := s.promptTokensTotal.Load()
	gen := s.generationTokensTotal.Load()
	ok := s.requestsOK.Load()
	model := promLabel(s.cfg.Model)
	var b strings.Builder
	metric := func(name, typ, help, labels string, v float64) {
		if labels != "" {
			labels = "{" + labels + "}"
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s%s %s\n", name, help, name, typ, name, labels,
			strconv.FormatFloat(v, 'g', -1, 64))
	}
	switch s.cfg.Kind {
	case "vllm":
		if s.sim != nil {
			s.writeVLLMEngines(&b, model)
			break
		}
		l := `engine="0",model_name="` + model + `"`
		metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", l, float64(running))
		metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", l, float64(waiting))
		metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", l, kvFrac)
		metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", l, float64(prompt))
		metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", l, float64(gen))
		metric("vllm:request_success_total", "counter", "Count of successfully processed requests.",
			`engine="0",finished_reason="length",model_name="`+model+`"`, float64(ok))
		s.ttft.write(&b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l)
		metric("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig",
			cacheConfigLabels(0, s.kvCapacity()), 1)
	case "llamacpp":
		metric("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.", "", float64(prompt))
		metric("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.", "", float64(gen))
		metric("llamacpp:requests_processing", "gauge", "Number of requests processing.", "", float64(running))
		metric("llamacpp:requests_deferred", "gauge", "Number of requests deferred.", "", float64(waiting))
		if s.sim != nil {
			// A current llama-server: its /metrics has no KV usage (the
			// kv_cache_* gauges were removed), but counts llama_decode calls.
			metric("llamacpp:n_decode_total", "counter", "Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding", "", float64(st.steps))
		} else {
			metric("llamacpp:kv_cache_usage_ratio", "gauge", "KV-cache usage. 1 means 100 percent usage.", "", kvFrac)
		}
	case "sglang":
		l := `model_name="` + model + `"`
		metric("sglang:num_running_reqs", "gauge", "The number of running requests.", l, float64(running))
		metric("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", l, float64(waiting))
		metric("sglang:token_usage", "gauge", "The token usage.", l, kvFrac)
		if s.sim != nil {
			metric("sglang:num_used_tokens", "gauge", "The number of used tokens", l, float64(st.usedTokens))
			metric("sglang:num_retracted_reqs", "gauge", "The number of retracted requests.", l, float64(st.retractedRecent))
		}
		metric("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", l, float64(prompt))
		metric("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", l, float64(gen))
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// cacheConfigLabels are the labels of vLLM's cache_config_info for one engine.
func cacheConfigLabels(engine, kvTokens int) string {
	return `block_size="` + strconv.Itoa(blockSize) + `",cache_dtype="auto",enable_prefix_caching="True",engine="` +
		strconv.Itoa(engine) + `",gpu_memory_utilization="0.9",kv_cache_size_tokens="` + strconv.Itoa(kvTokens) +
		`",num_cpu_blocks="0",num_gpu_blocks="` + strconv.Itoa((kvTokens+blockSize-1)/blockSize) + `"`
}

// vllmBefore010 says whether version names a vLLM before 0.10, whose metrics say
// gpu_cache_usage_perc and carry no engine label or kv_cache_size_tokens.
func vllmBefore010(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return err1 == nil && err2 == nil && major == 0 && minor < 10
}

// writeVLLMEngines writes the vLLM metrics of the step schedulers: one series per
// data-parallel engine (engine="N"), as vLLM labels them. The TTFT histogram and
// the success counter, kept for the whole server, go on engine 0. With a Version
// before 0.10 the names and labels are those of vLLM 0.4-0.9 (gpu_cache_usage_perc,
// model_name only, cache_config_info without kv_cache_size_tokens).
func (s *Server) writeVLLMEngines(b *strings.Builder, model string) {
	legacy := vllmBefore010(s.cfg.Version)
	labels := func(i int) string { return `engine="` + strconv.Itoa(i) + `",model_name="` + model + `"` }
	usageName, usageHelp := "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."
	runningHelp := "Number of requests in model execution batches."
	if legacy {
		labels = func(int) string { return `model_name="` + model + `"` }
		usageName, usageHelp = "vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage."
		runningHelp = "Number of requests currently running on GPU."
	}
	family := func(name, typ, help string, v func(i int, l *simLoop, st simState) float64) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for i, l := range s.engines {
			fmt.Fprintf(b, "%s{%s} %s\n", name, labels(i), strconv.FormatFloat(v(i, l, l.state()), 'g', -1, 64))
		}
	}
	family("vllm:num_requests_running", "gauge", runningHelp,
		func(_ int, _ *simLoop, st simState) float64 { return float64(st.running) })
	family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
		func(_ int, _ *simLoop, st simState) float64 { return float64(st.waiting) })
	family(usageName, "gauge", usageHelp,
		func(_ int, _ *simLoop, st simState) float64 { return st.usage })
	family("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
		func(_ int, _ *simLoop, st simState) float64 { return float64(st.preemptionsTotal) })
	family("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
		func(_ int, l *simLoop, _ simState) float64 { return float64(l.promptTokens.Load()) })
	family("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
		func(_ int, l *simLoop, _ simState) float64 { return float64(l.genTokens.Load()) })
	s.writeVLLMOffload(b, labels)
	success := strings.Replace(labels(0), `model_name=`, `finished_reason="length",model_name=`, 1)
	fmt.Fprintf(b, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	fmt.Fprintf(b, "vllm:request_success_total{%s} %d\n", success, s.requestsOK.Load())
	s.ttft.write(b, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels(0))
	if legacy {
		fmt.Fprintf(b, "# HELP vllm:cache_config_info information of cache_config\n# TYPE vllm:cache_config_info gauge\n")
		fmt.Fprintf(b, "vllm:cache_config_info{block_size=\"%d\",cache_dtype=\"auto\",enable_prefix_caching=\"False\",gpu_memory_utilization=\"0.9\",num_cpu_blocks=\"0\",num_gpu_blocks=\"%d\"} 1.0\n",
			blockSize, s.cfg.KVTokens/blockSize)
		return
	}
	fmt.Fprintf(b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	for i := range s.engines {
		fmt.Fprintf(b, "vllm:cache_config_info{%s} 1\n", cacheConfigLabels(i, s.cfg.KVTokens))
	}
}

// llamaSlots is the slot count llama.cpp reports (it always has at least one).
func (s *Server) llamaSlots() int { return max(s.cfg.Slots, 1) }

// llamaSlotContext is the n_ctx of a slot as /props and /slots report it.
func (s *Server) llamaSlotContext() int {
	if s.sim != nil {
		return s.cfg.slotContext()
	}
	return s.maxModelLen()
}

func (s *Server) serveLlamaProps(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"default_generation_settings": map[string]any{
			"id":     0,
			"n_ctx":  s.llamaSlotContext(),
			"params": map[string]any{"n_predict": -1},
		},
		"total_slots": s.llamaSlots(),
		"model_path":  s.cfg.Model + ".gguf",
		"build_info":  s.version(),
	})
}

func (s *Server) serveLlamaSlots(w http.ResponseWriter, r *http.Request) {
	running, _, _ := s.load()
	slots := make([]map[string]any, s.llamaSlots())
	for i := range slots {
		slots[i] = map[string]any{"id": i, "n_ctx": s.llamaSlotContext(), "is_processing": i < running}
	}
	writeJSON(w, slots)
}

// serveVLLMTokenize answers vLLM's POST /tokenize ({"model","prompt"} or
// {"model","messages"} → {"count","max_model_len","tokens"}).
func (s *Server) serveVLLMTokenize(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, http.StatusUnauthorized, "AuthenticationError", "Unauthorized: invalid or missing API key")
		return
	}
	var q request
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&q); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "invalid /tokenize body: "+err.Error())
		return
	}
	if q.Model != "" && q.Model != s.cfg.Model {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", q.Model))
		return
	}
	ep := endpointCompletions
	if q.Messages != nil {
		ep = endpointChat
	}
	n, err := q.promptTokens(ep)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	writeJSON(w, map[string]any{"count": n, "max_model_len": s.maxModelLen(), "tokens": fakeTokenIDs(n)})
}

// fakeTokenIDs returns n plausible token ids.
func fakeTokenIDs(n int) []int {
	tokens := make([]int, n)
	for i := range tokens {
		tokens[i] = 1000 + i%1000
	}
	return tokens
}

func (s *Server) serveLlamaTokenize(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Content string `json:"content"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&q); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid /tokenize body: "+err.Error())
		return
	}
	writeJSON(w, map[string]any{"tokens": fakeTokenIDs(CountTokens(q.Content))})
}

func (s *Server) serveSGLangInfo(w http.ResponseWriter, r *http.Request) {
	info := map[string]any{
		"model_path":           s.cfg.Model,
		"context_length":       s.maxModelLen(),
		"max_total_num_tokens": s.kvCapacity(),
		"version":              s.version(),
	}
	if s.cfg.Slots > 0 {
		info["max_running_requests"] = s.cfg.Slots
	}
	writeJSON(w, info)
}

// ttftBuckets are the upper bounds of the TTFT histogram, in seconds (vLLM's).
var ttftBuckets = [...]float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
	0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}

// histogram is a Prometheus histogram of durations, safe for concurrent use.
type histogram struct {
	counts [len(ttftBuckets) + 1]atomic.Int64 // per bucket, not cumulative; last is +Inf
	sumNs  atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	sec := d.Seconds()
	i := 0
	for i < len(ttftBuckets) && sec > ttftBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
}

// write appends the histogram in Prometheus text format; labels go before "le".
func (h *histogram) write(b *strings.Builder, name, help, labels string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum int64
	for i := range h.counts {
		cum += h.counts[i].Load()
		le := "+Inf"
		if i < len(ttftBuckets) {
			le = strconv.FormatFloat(ttftBuckets[i], 'g', -1, 64)
		}
		fmt.Fprintf(b, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels, le, cum)
	}
	fmt.Fprintf(b, "%s_count{%s} %d\n", name, labels, cum)
	fmt.Fprintf(b, "%s_sum{%s} %s\n", name, labels, strconv.FormatFloat(time.Duration(h.sumNs.Load()).Seconds(), 'g', -1, 64))
}
