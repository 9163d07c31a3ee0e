package enginetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sseEvent is one parsed Server-Sent Event: its data lines joined with "\n".
type sseEvent struct{ data string }

// readSSE is a minimal SSE reader for the tests: LF or CRLF lines, ':' comments
// skipped, events ended by a blank line. It returns the events read and the first
// error other than io.EOF.
func readSSE(r io.Reader) ([]sseEvent, error) {
	var evs []sseEvent
	var data []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return evs, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if data != nil {
				evs = append(evs, sseEvent{strings.Join(data, "\n")})
				data = nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

type chunk struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens            int `json:"prompt_tokens"`
		CompletionTokens        int `json:"completion_tokens"`
		TotalTokens             int `json:"total_tokens"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func post(t testing.TB, url, path string, body any, header ...string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

func chatBody(prompt string, maxTokens int) map[string]any {
	return map[string]any{
		"model":          "test-model",
		"messages":       []map[string]any{{"role": "user", "content": prompt}},
		"max_tokens":     maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"ignore_eos":     true,
	}
}

var createdRE = regexp.MustCompile(`"created":\d+`)

// checkGolden compares got with testdata/name (created timestamps normalized).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = createdRE.ReplaceAll(got, []byte(`"created":0`))
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the stream:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestStreamShape(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		path   string
		body   map[string]any
		golden string
		// want: the token texts of the token chunks, in order ("r:" = reasoning).
		want                      []string
		prompt, output, reasoning int
		usage                     bool
		usageEvents               int // events carrying usage; 0 = 1 if usage
	}{
		{
			name:   "chat reasoning, 2 tokens per chunk",
			cfg:    Config{TokensPerChunk: 2, ReasoningTokens: 3},
			path:   "/v1/chat/completions",
			body:   chatBody("one two three four", 7),
			golden: "chat_stream.golden",
			want:   []string{"r:think think ", "r:think ", "tok tok ", "tok tok "},
			prompt: 4, output: 7, reasoning: 3, usage: true,
		},
		{
			name: "chat reasoning field, no usage asked",
			cfg:  Config{ReasoningTokens: 1, ReasoningField: "reasoning"},
			path: "/v1/chat/completions",
			body: map[string]any{"model": "test-model", "stream": true, "max_tokens": 2,
				"messages": []map[string]any{{"role": "system", "content": "be brief"},
					{"role": "user", "content": []map[string]any{{"type": "text", "text": "a b c"}}}}},
			want:   []string{"r:think ", "tok "},
			prompt: 5, output: 2, reasoning: 1,
		},
		{
			name:   "usage ignored by the server",
			cfg:    Config{IgnoreUsageOption: true},
			path:   "/v1/chat/completions",
			body:   chatBody("x", 2),
			want:   []string{"tok ", "tok "},
			prompt: 1, output: 2,
		},
		{
			name: "completions",
			cfg:  Config{TokensPerChunk: 3, ReasoningTokens: 5},
			path: "/v1/completions",
			body: map[string]any{"model": "test-model", "prompt": "hello there world", "max_tokens": 4,
				"stream": true, "stream_options": map[string]any{"include_usage": true}},
			golden: "completions_stream.golden",
			want:   []string{"tok tok tok ", "tok "},
			prompt: 3, output: 4, usage: true,
		},
		{
			name: "continuous usage stats",
			path: "/v1/chat/completions",
			body: map[string]any{"model": "test-model", "prompt": "unused", "max_tokens": 2, "stream": true,
				"messages":       []map[string]any{{"role": "user", "content": "a b c"}},
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}},
			golden: "chat_continuous_usage.golden",
			want:   []string{"tok ", "tok "},
			prompt: 3, output: 2, usage: true, usageEvents: 5,
		},
		{
			name: "llama.cpp completions: usage on the finish chunk",
			cfg:  Config{Kind: "llamacpp"},
			path: "/v1/completions",
			body: map[string]any{"model": "test-model", "prompt": "a", "max_tokens": 2, "stream": true,
				"stream_options": map[string]any{"include_usage": true}},
			golden: "llamacpp_completions_stream.golden",
			want:   []string{"tok ", "tok "},
			prompt: 1, output: 2, usage: true,
		},
		{
			name:   "default output length",
			cfg:    Config{DefaultOutputTokens: 3},
			path:   "/v1/completions",
			body:   map[string]any{"prompt": []string{"a b", "c"}, "stream": true},
			want:   []string{"tok ", "tok ", "tok "},
			prompt: 3, output: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.cfg)
			defer s.Close()
			resp := post(t, s.URL(), tc.path, tc.body, "X-Request-Id", "req-1")
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			if tc.golden != "" {
				checkGolden(t, tc.golden, raw)
			}
			evs, err := readSSE(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(evs); n == 0 || evs[n-1].data != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %q", raw)
			}
			chat := tc.path == "/v1/chat/completions"
			var tokens []string
			var finish string
			var sawRole bool
			usageEvents := 0
			for i, ev := range evs[:len(evs)-1] {
				var c chunk
				if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
					t.Fatalf("event %d %q: %v", i, ev.data, err)
				}
				if c.Model != "test-model" {
					t.Errorf("event %d model %q", i, c.Model)
				}
				if u := c.Usage; u != nil {
					usageEvents++
					if u.PromptTokens != tc.prompt || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
						t.Errorf("usage %+v, want prompt %d", *u, tc.prompt)
					}
					if i == len(evs)-2 || len(c.Choices) == 1 && c.Choices[0].FinishReason != nil && tc.usageEvents == 0 {
						// The final usage: the whole request.
						if u.CompletionTokens != tc.output {
							t.Errorf("final usage %+v, want completion %d", *u, tc.output)
						}
						if chat && (u.CompletionTokensDetails == nil || u.CompletionTokensDetails.ReasoningTokens != tc.reasoning) {
							t.Errorf("usage reasoning details %+v, want %d", u.CompletionTokensDetails, tc.reasoning)
						}
					}
					if len(c.Choices) == 0 {
						continue
					}
				}
				if len(c.Choices) != 1 {
					t.Fatalf("event %d has %d choices", i, len(c.Choices))
				}
				ch := c.Choices[0]
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
					continue
				}
				switch {
				case ch.Delta.Role != nil:
					if i != 0 || *ch.Delta.Role != "assistant" {
						t.Errorf("role delta in event %d: %s", i, ev.data)
					}
					sawRole = true
				case ch.Delta.ReasoningContent != nil:
					tokens = append(tokens, "r:"+*ch.Delta.ReasoningContent)
				case ch.Delta.Reasoning != nil:
					tokens = append(tokens, "r:"+*ch.Delta.Reasoning)
				case ch.Delta.Content != nil:
					tokens = append(tokens, *ch.Delta.Content)
				case ch.Text != nil:
					tokens = append(tokens, *ch.Text)
				}
			}
			if fmt.Sprint(tokens) != fmt.Sprint(tc.want) {
				t.Errorf("token chunks %q, want %q", tokens, tc.want)
			}
			if sawRole != chat {
				t.Errorf("role chunk seen %v, want %v", sawRole, chat)
			}
			wantUsage := tc.usageEvents
			if wantUsage == 0 && tc.usage {
				wantUsage = 1
			}
			if usageEvents != wantUsage {
				t.Errorf("%d events carry usage, want %d", usageEvents, wantUsage)
			}
			if finish != "length" {
				t.Errorf("finish_reason %q, want length", finish)
			}
			log := s.Log()
			if len(log) != 1 {
				t.Fatalf("%d log entries", len(log))
			}
			l := log[0]
			if l.RequestID != "req-1" {
				t.Errorf("log request id %q, want the X-Request-Id header", l.RequestID)
			}
			if l.PromptTokens != tc.prompt || l.OutputTokens != tc.output || l.ReasoningTokens != tc.reasoning ||
				l.Chunks != len(tc.want) || !l.Completed || l.Status != 200 || !l.Stream || l.FinishReason != "length" {
				t.Errorf("log entry %+v", l)
			}
		})
	}
}

func TestNonStream(t *testing.T) {
	s := New(Config{ReasoningTokens: 1})
	defer s.Close()
	body := chatBody("a b", 3)
	body["stream"] = false
	body["stop"] = []string{"\n"}
	resp := post(t, s.URL(), "/v1/chat/completions", body)
	defer resp.Body.Close()
	var out struct {
		Object  string
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Object != "chat.completion" || len(out.Choices) != 1 || out.Choices[0].Message.Content != "tok tok " ||
		out.Choices[0].Message.ReasoningContent != "think " || out.Choices[0].FinishReason != "stop" ||
		out.Usage.PromptTokens != 2 || out.Usage.CompletionTokens != 3 {
		t.Errorf("response %+v", out)
	}
	if l := s.Log()[0]; l.Stream || !l.Completed || l.OutputTokens != 3 || l.FinishReason != "stop" {
		t.Errorf("log %+v", l)
	}
}

func TestTiming(t *testing.T) {
	const ttft, gap, n = 40 * time.Millisecond, 10 * time.Millisecond, 6
	s := New(Config{TTFT: ttft, TokenGap: gap, RecordChunkTimes: true})
	defer s.Close()
	resp := post(t, s.URL(), "/v1/chat/completions", chatBody("x", n))
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	l := s.Log()[0]
	if len(l.ChunkTimes) != n || !l.ChunkTimes[0].Equal(l.FirstTokenSent) || !l.ChunkTimes[n-1].Equal(l.LastTokenSent) {
		t.Fatalf("chunk times %v, first %v last %v", l.ChunkTimes, l.FirstTokenSent, l.LastTokenSent)
	}
	// Timers fire late, never early; allow generous lateness for a busy machine.
	const late = 15 * time.Millisecond
	t0 := l.SlotAcquired.Add(ttft)
	for i, ct := range l.ChunkTimes {
		due := t0.Add(time.Duration(i) * gap)
		if d := ct.Sub(due); d < 0 || d > late {
			t.Errorf("chunk %d sent %v after its due time", i, d)
		}
	}
	if d := l.SlotAcquired.Sub(l.Received); d < 0 || d > late {
		t.Errorf("slot acquired %v after receipt with free slots", d)
	}
}

// streamAll runs n concurrent chat streams and waits for them.
func streamAll(t *testing.T, s *Server, bodies []map[string]any, stagger time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	for _, b := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, s.URL(), "/v1/chat/completions", b)
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(stagger)
	}
	wg.Wait()
}

func TestSlotsQueue(t *testing.T) {
	s := New(Config{Slots: 2, TokenGap: 20 * time.Millisecond})
	defer s.Close()
	bodies := make([]map[string]any, 4)
	for i := range bodies {
		bodies[i] = chatBody("x", 8)
	}
	streamAll(t, s, bodies, 2*time.Millisecond)
	log := s.Log()
	if len(log) != 4 {
		t.Fatalf("%d log entries", len(log))
	}
	// In the order slots were granted, the third and fourth requests must each
	// start only after one of the first two finished.
	sort.Slice(log, func(i, j int) bool { return log[i].SlotAcquired.Before(log[j].SlotAcquired) })
	ends := []time.Time{log[0].LastTokenSent, log[1].LastTokenSent}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	for i, l := range log {
		if !l.Completed {
			t.Errorf("request %d not completed: %+v", l.Index, l)
		}
		if l.Received.After(ends[0]) {
			t.Fatalf("request %d arrived after the first stream ended; no queueing to test", l.Index)
		}
		if i >= 2 && l.SlotAcquired.Before(ends[i-2]) {
			t.Errorf("request %d got a slot at %v, before a running one ended at %v", l.Index, l.SlotAcquired, ends[i-2])
		}
	}
	if log[2].SlotAcquired.Sub(log[2].Received) < 100*time.Millisecond {
		t.Errorf("third request did not queue: received %v, slot %v", log[2].Received, log[2].SlotAcquired)
	}
}

func TestKVBudgetQueue(t *testing.T) {
	// Each request needs 10 prompt + 40 output tokens; 120 holds two at a time.
	prompt := strings.Repeat("w ", 10)
	s := New(Config{KVTokens: 120, TokenGap: 10 * time.Millisecond, Kind: "vllm"})
	defer s.Close()
	bodies := []map[string]any{chatBody(prompt, 40), chatBody(prompt, 40), chatBody(prompt, 40)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		streamAll(t, s, bodies, 0)
	}()
	// Wait until all three arrived, then two run and one waits.
	deadline := time.Now().Add(2 * time.Second)
	for s.Running()+s.Waiting() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if r, w := s.Running(), s.Waiting(); r != 2 || w != 1 {
		t.Errorf("running %d waiting %d, want 2 and 1", r, w)
	}
	m := get(t, s.URL()+"/metrics")
	for _, want := range []string{`vllm:num_requests_running{engine="0",model_name="test-model"} 2`,
		`vllm:num_requests_waiting{engine="0",model_name="test-model"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, m)
		}
	}
	// KV usage counts the tokens the two running requests hold (as vLLM's gauge
	// does): both prompts at least, both whole requests at most.
	const usage = `vllm:kv_cache_usage_perc{engine="0",model_name="test-model"} `
	i := strings.Index(m, usage)
	var frac float64
	if i < 0 {
		t.Errorf("/metrics lacks %s", usage)
	} else if _, err := fmt.Sscan(m[i+len(usage):], &frac); err != nil || frac < 20.0/120 || frac > 100.0/120 {
		t.Errorf("KV usage %v (%v), want within [20/120, 100/120]", frac, err)
	}
	<-done
	log := s.Log()
	sort.Slice(log, func(i, j int) bool { return log[i].SlotAcquired.Before(log[j].SlotAcquired) })
	end := log[0].LastTokenSent
	if log[1].LastTokenSent.Before(end) {
		end = log[1].LastTokenSent
	}
	if log[2].SlotAcquired.Before(end) {
		t.Errorf("third request started at %v, before the KV budget freed at %v", log[2].SlotAcquired, end)
	}

	// A request larger than the whole budget runs alone instead of waiting forever.
	resp := post(t, s.URL(), "/v1/chat/completions", chatBody(prompt, 200))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if l := s.Log()[3]; !l.Completed {
		t.Errorf("oversized request: %+v", l)
	}
}

func get(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d: %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestBatchGapGrowsWithTheBatch: with DecodeBatch and BatchGap every token gap is
// TokenGap up to DecodeBatch running requests and BatchGap more for each one past
// it, so a stream of n tokens lasts (n − 1) × that gap, without a slot cap (every
// request runs at once, none waits).
func TestBatchGapGrowsWithTheBatch(t *testing.T) {
	const gap, batchGap, n = 10 * time.Millisecond, 10 * time.Millisecond, 11
	for _, tc := range []struct {
		batch, decodeBatch int
		wantGap            time.Duration
	}{
		{1, 2, gap},
		{2, 2, gap},
		{4, 2, gap + 2*batchGap},
		{6, 2, gap + 4*batchGap},
		{4, 0, gap + 4*batchGap}, // DecodeBatch 0: every request adds its BatchGap
	} {
		t.Run(fmt.Sprintf("%d running, decode batch %d", tc.batch, tc.decodeBatch), func(t *testing.T) {
			// The first token waits for every request to hold its slot, so that
			// each gap sees the whole batch.
			s := New(Config{TTFT: 30 * time.Millisecond, TokenGap: gap, DecodeBatch: tc.decodeBatch, BatchGap: batchGap})
			defer s.Close()
			bodies := make([]map[string]any, tc.batch)
			for i := range bodies {
				bodies[i] = chatBody("x", n)
			}
			streamAll(t, s, bodies, 0)
			want := time.Duration(n-1) * tc.wantGap
			fastest := time.Duration(math.MaxInt64)
			for _, l := range s.Log() {
				// A request that waited for a slot would wait for a whole stream
				// ((n − 1) × gap ≥ 100 ms); a busy machine delays the handler's
				// goroutine by a few milliseconds, not that much.
				if !l.Completed || !l.SlotAcquired.Before(l.Received.Add(50*time.Millisecond)) {
					t.Fatalf("request %d: completed %v, waited %v for a slot", l.Index, l.Completed, l.SlotAcquired.Sub(l.Received))
				}
				// Timers fire late, never early: no stream is shorter than its
				// gaps, which a fixed gap would make it.
				got := l.LastTokenSent.Sub(l.FirstTokenSent)
				if got < want-time.Millisecond {
					t.Errorf("request %d streamed for %v, want at least %v ((n − 1) × %v)", l.Index, got, want, tc.wantGap)
				}
				fastest = min(fastest, got)
			}
			// A busy machine (the race detector, other builds) stalls streams by
			// up to ~150 ms; the least stalled one is within that of its gaps,
			// less than a BatchGap added for every request would make it.
			if fastest > want+150*time.Millisecond {
				t.Errorf("the fastest stream took %v, want %v ((n − 1) × %v)", fastest, want, tc.wantGap)
			}
		})
	}
}
