package enginetest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/internal/prom"
	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

// fast is the step timing of these tests: 0.5ms a step, 5µs a token.
func fast(cfg Config) Config {
	cfg.StepTime, cfg.TokenTime = 500*time.Microsecond, 5*time.Microsecond
	return cfg
}

// concurrentStreams runs n identical chat streams at once and returns their results.
func concurrentStreams(t *testing.T, s *Server, n int, body map[string]any) []streamResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := make([]streamResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = runStream(t, ctx, s.URL(), "/v1/chat/completions", body)
		}()
	}
	wg.Wait()
	return res
}

func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	samples, err := prom.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	for _, s := range samples {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("/metrics lacks %s:\n%s", name, text)
	return 0
}

// TestSchedulerHTTP runs the vLLM and SGLang step schedulers over HTTP below and
// past their KV cache: every stream completes with all its tokens either way;
// preemptions (retractions) happen only past the cache, and /metrics shows them.
func TestSchedulerHTTP(t *testing.T) {
	prompt := strings.Repeat("w ", 20)
	for _, tc := range []struct {
		sched, counter string
		n              int
		past           bool
	}{
		// 1024 tokens; requests of 20 + 180 (13 blocks, 200 tokens).
		{SchedulerVLLM, "vllm:num_preemptions_total", 4, false},
		{SchedulerVLLM, "vllm:num_preemptions_total", 12, true},
		{SchedulerSGLang, "", 4, false},
		{SchedulerSGLang, "", 12, true},
	} {
		s := New(fast(Config{Scheduler: tc.sched, KVTokens: 1024}))
		res := concurrentStreams(t, s, tc.n, chatBody(prompt, 180))
		for i, r := range res {
			if r.status != http.StatusOK || !r.done || r.tokens != 180 {
				t.Errorf("%s n=%d: stream %d: status %d, done %v, %d tokens; want 200, done, 180", tc.sched, tc.n, i, r.status, r.done, r.tokens)
			}
		}
		if got := s.Preemptions() > 0; got != tc.past {
			t.Errorf("%s n=%d: %d preemptions, want preemptions %v", tc.sched, tc.n, s.Preemptions(), tc.past)
		}
		m := get(t, s.URL()+"/metrics")
		if tc.counter != "" {
			if v := metricValue(t, m, tc.counter); v != float64(s.Preemptions()) {
				t.Errorf("%s: %s %v, want %d", tc.sched, tc.counter, v, s.Preemptions())
			}
		}
		if st := s.sim.state(); st.usedTokens != 0 || st.running != 0 {
			t.Errorf("%s: idle engine holds %d tokens, %d running", tc.sched, st.usedTokens, st.running)
		}
		t.Logf("%s n=%d: %d preemptions", tc.sched, tc.n, s.Preemptions())
		s.Close()
	}
}

// TestLlamaUnifiedHTTP: llama.cpp's unified cache fails the batch when full. A
// long request streams; a second one whose prompt no longer fits makes the next
// batch fail: the second, before its first token, gets HTTP 500 with llama.cpp's
// error body, the first an error event mid-stream; both are logged "kv".
func TestLlamaUnifiedHTTP(t *testing.T) {
	// Steps of 5ms: the first stream's last 400 tokens take 2s, time enough for
	// the second request to arrive on a loaded machine.
	s := New(Config{Scheduler: SchedulerLlamaUnified, KVTokens: 1000, Slots: 4, StepTime: 5 * time.Millisecond})
	defer s.Close()
	body := chatBody(strings.Repeat("w ", 100), 850)
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(string(b)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Read the first stream until it holds over 500 cells (100 + 450 tokens).
	br := bufio.NewReader(resp.Body)
	var rest strings.Builder
	for tokens := 0; tokens < 450; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("first stream ended after %d tokens: %v", tokens, err)
		}
		if strings.Contains(line, `"content":"tok `) {
			tokens++
		}
	}
	second := post(t, s.URL(), "/v1/chat/completions", chatBody(strings.Repeat("w ", 500), 10))
	raw, _ := io.ReadAll(second.Body)
	second.Body.Close()
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if second.StatusCode != http.StatusInternalServerError || json.Unmarshal(raw, &e) != nil ||
		e.Error.Message != "Context size has been exceeded." || e.Error.Type != "server_error" || e.Error.Code != 500 {
		t.Errorf("second request: %d %s; want 500 with llama.cpp's \"Context size has been exceeded.\"", second.StatusCode, raw)
	}
	tail, _ := io.ReadAll(br)
	rest.Write(tail)
	if !strings.Contains(rest.String(), `data: {"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`) ||
		strings.Contains(rest.String(), "[DONE]") {
		t.Errorf("first stream's end lacks llama.cpp's error event (or has [DONE]):\n%s", tail)
	}
	for _, l := range s.Log() {
		if l.Aborted != "kv" || l.Completed {
			t.Errorf("request %d: aborted %q completed %v, want \"kv\"", l.Index, l.Aborted, l.Completed)
		}
	}
	if l := s.Log(); len(l) == 2 && l[1].Status != http.StatusInternalServerError {
		t.Errorf("second request logged status %d, want 500", l[1].Status)
	}
}

// TestLlamaSlotsHTTP: per-slot caches of KVTokens/Slots: /props reports the
// slot's n_ctx, a prompt that fills it is refused with llama.cpp's 400, and
// generation stops where the slot's context ends.
func TestLlamaSlotsHTTP(t *testing.T) {
	s := New(fast(Config{Scheduler: SchedulerLlamaSlots, KVTokens: 1000, Slots: 4}))
	defer s.Close()
	if p := get(t, s.URL()+"/props"); !strings.Contains(p, `"n_ctx":250`) || !strings.Contains(p, `"total_slots":4`) {
		t.Errorf("/props = %s, want n_ctx 250 and 4 slots", p)
	}
	resp := post(t, s.URL(), "/v1/chat/completions", chatBody(strings.Repeat("w ", 250), 10))
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), "exceeds the available context size (250 tokens)") ||
		!strings.Contains(string(raw), "exceed_context_size_error") {
		t.Errorf("prompt of 250 tokens: %d %s; want 400 exceed_context_size_error", resp.StatusCode, raw)
	}
	res := concurrentStreams(t, s, 6, chatBody(strings.Repeat("w ", 100), 200))
	for i, r := range res {
		if r.status != http.StatusOK || !r.done || r.tokens != 150 || !strings.Contains(string(r.raw), `"finish_reason":"length"`) {
			t.Errorf("stream %d: status %d, done %v, %d tokens; want 150 tokens ending with length", i, r.status, r.done, r.tokens)
		}
	}
}

// TestSchedulerMetricsMatchRealDumps: every metric a step scheduler exposes that a
// real server's dump also has carries the real dump's type, and the names the
// analysis reads (running, waiting, KV usage, preemptions or retractions) are
// those of the real servers.
func TestSchedulerMetricsMatchRealDumps(t *testing.T) {
	// Real servers' /metrics dumps, shared beside the repository.
	metricsFixtures := sharedtest.Dir(t, "metrics-fixtures")
	entries, err := os.ReadDir(metricsFixtures)
	if err != nil {
		t.Fatalf("the real /metrics dumps: %v", err)
	}
	realType := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".prom") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(metricsFixtures, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
				realType[f[2]] = f[3]
			}
		}
	}
	for _, tc := range []struct {
		sched, version string
		names          []string // names that must be exposed and found in some real dump
	}{
		{SchedulerVLLM, "", []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:num_preemptions_total", "vllm:cache_config_info", "vllm:prefix_cache_queries_total"}},
		{SchedulerVLLM, "0.4.3", []string{"vllm:num_requests_running", "vllm:gpu_cache_usage_perc", "vllm:num_preemptions_total", "vllm:cache_config_info"}},
		{SchedulerSGLang, "", []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:num_used_tokens", "sglang:cache_hit_rate"}},
		{SchedulerLlamaUnified, "", []string{"llamacpp:requests_processing", "llamacpp:requests_deferred", "llamacpp:prompt_tokens_total", "llamacpp:n_decode_total"}},
	} {
		s := New(fast(Config{Scheduler: tc.sched, KVTokens: 4096, Version: tc.version}))
		concurrentStreams(t, s, 2, chatBody("a b c", 5))
		m := get(t, s.URL()+"/metrics")
		s.Close()
		ours := map[string]string{}
		for _, line := range strings.Split(m, "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
				ours[f[2]] = f[3]
			}
		}
		for name, typ := range ours {
			if rt, ok := realType[name]; ok && rt != typ {
				t.Errorf("%s: %s is a %s, the real dumps say %s", tc.sched, name, typ, rt)
			}
		}
		if tc.sched == SchedulerLlamaUnified && strings.Contains(m, "kv_cache") {
			t.Errorf("%s: a current llama-server exposes no kv_cache_* metric:\n%s", tc.sched, m)
		}
		for _, name := range tc.names {
			if ours[name] == "" || realType[name] == "" {
				t.Errorf("%s: %s exposed %q, in a real dump %q; want both", tc.sched, name, ours[name], realType[name])
			}
		}
	}
}

// TestSchedulerCancelAndPlain: a client that goes away mid-stream frees its KV at
// the next step, and a non-streamed request waits for all its tokens.
func TestSchedulerCancelAndPlain(t *testing.T) {
	s := New(fast(Config{Scheduler: SchedulerVLLM, KVTokens: 4096}))
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := json.Marshal(chatBody("a b c", 2000))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(string(b)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for tokens := 0; tokens < 20; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"content":"tok `) {
			tokens++
		}
	}
	if st := s.sim.state(); st.running != 1 || st.usedTokens == 0 {
		t.Fatalf("mid-stream: %+v, want one running request holding KV", st)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.sim.state().usedTokens != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := s.sim.state(); st.running != 0 || st.usedTokens != 0 {
		t.Errorf("after the client left: %+v, want nothing running or held", st)
	}
	body := chatBody("a b c", 30)
	body["stream"] = false
	plain := post(t, s.URL(), "/v1/chat/completions", body)
	raw, _ := io.ReadAll(plain.Body)
	plain.Body.Close()
	if plain.StatusCode != http.StatusOK || strings.Count(string(raw), "tok ") != 30 {
		t.Errorf("non-streamed: %d %s; want 30 tokens", plain.StatusCode, raw)
	}
}

// TestVLLMDataParallel: two data-parallel vLLM engines of 1024 tokens each take
// eight requests of 20 + 160 tokens (12 blocks of 16), and none preempts, where one
// engine alone must; /metrics has each engine's series, cache_config_info included.
// The router scores waiting×4 + running as vLLM's does, so a burst can split 5/3
// rather than 4/4: five requests (960 tokens) still fit an engine, six would not.
func TestVLLMDataParallel(t *testing.T) {
	const outputTokens = 160
	for _, tc := range []struct {
		dp      int
		preempt bool
	}{{1, true}, {2, false}} {
		s := New(fast(Config{Scheduler: SchedulerVLLM, KVTokens: 1024, DataParallel: tc.dp}))
		res := concurrentStreams(t, s, 8, chatBody(strings.Repeat("w ", 20), outputTokens))
		for i, r := range res {
			if r.status != http.StatusOK || r.tokens != outputTokens {
				t.Errorf("dp=%d: stream %d: status %d, %d tokens", tc.dp, i, r.status, r.tokens)
			}
		}
		if got := s.Preemptions() > 0; got != tc.preempt {
			t.Errorf("dp=%d: %d preemptions, want preemptions %v", tc.dp, s.Preemptions(), tc.preempt)
		}
		m := get(t, s.URL()+"/metrics")
		samples, err := prom.Parse(strings.NewReader(m))
		if err != nil {
			t.Fatal(err)
		}
		engines := map[string]bool{}
		var gen float64
		for _, x := range samples {
			switch x.Name {
			case "vllm:cache_config_info":
				l := prom.ParseLabels(x.Labels)
				engines[l["engine"]] = true
				if l["kv_cache_size_tokens"] != "1024" || l["num_gpu_blocks"] != "64" {
					t.Errorf("dp=%d: cache_config_info %s, want 1024 tokens, 64 blocks an engine", tc.dp, x.Labels)
				}
			case "vllm:generation_tokens_total":
				gen += x.Value
			}
		}
		if len(engines) != tc.dp || gen != 8*outputTokens {
			t.Errorf("dp=%d: cache_config_info of engines %v, %v tokens generated in all; want %d engines and %d", tc.dp, engines, gen, tc.dp, 8*outputTokens)
		}
		s.Close()
	}
}

// TestVLLMLegacyMetrics: with a Version before 0.10 the vLLM scheduler speaks the
// names of the vLLM 0.4.3 dump (gpu_cache_usage_perc, no engine label,
// cache_config_info without kv_cache_size_tokens), and the preemption counter
// still counts.
func TestVLLMLegacyMetrics(t *testing.T) {
	s := New(fast(Config{Scheduler: SchedulerVLLM, KVTokens: 1024, Version: "0.4.3"}))
	defer s.Close()
	concurrentStreams(t, s, 12, chatBody(strings.Repeat("w ", 20), 180))
	m := get(t, s.URL()+"/metrics")
	for _, want := range []string{"# TYPE vllm:gpu_cache_usage_perc gauge", `vllm:num_requests_running{model_name="test-model"} 0`,
		`num_gpu_blocks="64"} 1.0`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, m)
		}
	}
	for _, unwanted := range []string{"kv_cache_usage_perc", `engine="`, "kv_cache_size_tokens"} {
		if strings.Contains(m, unwanted) {
			t.Errorf("/metrics of vLLM 0.4.3 has %q:\n%s", unwanted, m)
		}
	}
	if v := metricValue(t, m, "vllm:num_preemptions_total"); v == 0 || v != float64(s.Preemptions()) {
		t.Errorf("preemptions %v, engine says %d; want the same, above 0", v, s.Preemptions())
	}
}
