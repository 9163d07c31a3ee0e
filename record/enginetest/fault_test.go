package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// streamResult is what a client saw of one stream.
type streamResult struct {
	status    int
	raw       []byte
	events    []sseEvent
	readErr   error // error reading the body (reset, timeout)
	tokens    int   // token-carrying chunks that parsed
	badJSON   int   // events that did not parse
	errEvents int
	done      bool // ended with [DONE]
	usage     bool
	cached    int // the usage's prompt_tokens_details.cached_tokens
}

func runStream(t *testing.T, ctx context.Context, url, path string, body map[string]any) streamResult {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return streamResult{readErr: err}
	}
	defer resp.Body.Close()
	var r streamResult
	r.status = resp.StatusCode
	r.raw, r.readErr = io.ReadAll(resp.Body)
	r.events, _ = readSSE(bytes.NewReader(r.raw))
	for _, ev := range r.events {
		if ev.data == "[DONE]" {
			r.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			r.badJSON++
			continue
		}
		switch {
		case c.Error != nil:
			r.errEvents++
		case c.Usage != nil:
			r.usage = true
			if d := c.Usage.PromptTokensDetails; d != nil {
				r.cached = d.CachedTokens
			}
		case len(c.Choices) == 1 && c.Choices[0].FinishReason == nil &&
			(c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" || c.Choices[0].Text != nil):
			r.tokens++
		}
	}
	return r
}

func TestFaults(t *testing.T) {
	const n = 6 // output tokens; mid-stream faults strike before token chunk 3
	tests := []struct {
		fault  Fault
		status int
		check  func(t *testing.T, r streamResult, l RequestLog)
	}{
		{FaultUnauthorized, 401, nil},
		{FaultModelNotFound, 404, nil},
		{FaultTooManyRequests, 429, nil},
		{FaultInternal, 500, nil},
		{FaultUnavailable, 503, nil},
		{FaultResetMidStream, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr == nil || r.tokens != n/2 || r.done {
				t.Errorf("read error %v, %d tokens, done %v; want a broken stream after %d tokens", r.readErr, r.tokens, r.done, n/2)
			}
			if l.Aborted != "fault" || l.OutputTokens != n/2 || l.Completed {
				t.Errorf("log %+v", l)
			}
		}},
		{FaultMalformedChunk, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr != nil || r.badJSON != 1 || r.tokens != n || !r.done || !r.usage {
				t.Errorf("read error %v, %d bad, %d tokens, done %v", r.readErr, r.badJSON, r.tokens, r.done)
			}
			if !l.Completed || l.OutputTokens != n {
				t.Errorf("log %+v", l)
			}
		}},
		{FaultStall, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr == nil || r.tokens != n/2 || r.done {
				t.Errorf("read error %v, %d tokens, done %v; want a timeout after %d tokens", r.readErr, r.tokens, r.done, n/2)
			}
			if l.Aborted != "client" || l.OutputTokens != n/2 {
				t.Errorf("log %+v", l)
			}
		}},
		{FaultErrorEvent, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr != nil || r.errEvents != 1 || r.tokens != n/2 || r.done || r.usage {
				t.Errorf("read error %v, %d error events, %d tokens, done %v", r.readErr, r.errEvents, r.tokens, r.done)
			}
			if r.events[len(r.events)-1].data[:9] != `{"error":` {
				t.Errorf("last event %q", r.events[len(r.events)-1].data)
			}
			if l.Aborted != "fault" || l.Completed {
				t.Errorf("log %+v", l)
			}
		}},
		{FaultNoDone, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr != nil || r.tokens != n || r.done || !r.usage {
				t.Errorf("read error %v, %d tokens, done %v, usage %v", r.readErr, r.tokens, r.done, r.usage)
			}
			if !l.Completed {
				t.Errorf("log %+v", l)
			}
		}},
		{FaultCRLF, 200, func(t *testing.T, r streamResult, l RequestLog) {
			if r.readErr != nil || r.tokens != n || !r.done || !r.usage || r.badJSON != 0 {
				t.Errorf("read error %v, %d tokens, done %v, %d bad", r.readErr, r.tokens, r.done, r.badJSON)
			}
			if bytes.Count(r.raw, []byte(": keep-alive\r\n\r\n")) < 2 || bytes.Contains(bytes.ReplaceAll(r.raw, []byte("\r\n"), nil), []byte("\n")) {
				t.Errorf("want CRLF framing with keep-alive comments: %q", r.raw)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fault.String(), func(t *testing.T) {
			s := New(Config{Fault: func(i int64) Fault {
				if i == 1 {
					return tc.fault
				}
				return FaultNone
			}})
			defer s.Close()
			// Request 0 is healthy: the fault hits only the index it names.
			if r := runStream(t, context.Background(), s.URL(), "/v1/chat/completions", chatBody("x", n)); r.status != 200 || !r.done || r.tokens != n {
				t.Fatalf("request 0: %+v", r)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			r := runStream(t, ctx, s.URL(), "/v1/chat/completions", chatBody("x", n))
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.raw)
			}
			if tc.status != 200 {
				var e struct {
					Error struct{ Message string } `json:"error"`
				}
				if err := json.Unmarshal(r.raw, &e); err != nil || e.Error.Message == "" {
					t.Errorf("error body %q: %v", r.raw, err)
				}
			}
			l := waitEnded(t, s, 1)
			if l.Fault != tc.fault || l.Status != tc.status {
				t.Errorf("log fault %v status %d", l.Fault, l.Status)
			}
			if tc.check != nil {
				tc.check(t, r, l)
			}
			if s.Running() != 0 {
				t.Errorf("%d requests still hold a slot", s.Running())
			}
		})
	}
}

// waitEnded waits until request i's handler has finished and returns its log.
func waitEnded(t *testing.T, s *Server, i int) RequestLog {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		log := s.Log()
		if len(log) > i && !log[i].Ended.IsZero() {
			return log[i]
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %d did not end: %+v", i, log)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestRejections(t *testing.T) {
	s := New(Config{APIKey: "sk-secret-123", MaxModelLen: 100})
	defer s.Close()
	auth := []string{"Authorization", "Bearer sk-secret-123"}
	long := chatBody(strings.Repeat("w ", 90), 20)
	wrongModel := chatBody("x", 2)
	wrongModel["model"] = "other"
	tests := []struct {
		name   string
		path   string
		body   any
		header []string
		status int
	}{
		{"no key", "/v1/chat/completions", chatBody("x", 2), nil, 401},
		{"wrong key", "/v1/chat/completions", chatBody("x", 2), []string{"Authorization", "Bearer nope"}, 401},
		{"good key", "/v1/chat/completions", chatBody("x", 2), auth, 200},
		{"unknown model", "/v1/chat/completions", wrongModel, auth, 404},
		{"beyond max_model_len", "/v1/chat/completions", long, auth, 400},
		{"zero max_tokens", "/v1/chat/completions", chatBody("x", 0), auth, 400},
		{"no messages", "/v1/chat/completions", map[string]any{"model": "test-model"}, auth, 400},
		{"no prompt", "/v1/completions", map[string]any{"model": "test-model"}, auth, 400},
		{"not json", "/v1/completions", "{", auth, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, s.URL(), tc.path, tc.body, tc.header...)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if strings.Contains(string(b), "secret") || strings.Contains(string(b), "nope") {
				t.Errorf("response echoes the key: %s", b)
			}
		})
	}
	// /v1/models needs the key too.
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/v1/models", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/v1/models without key: %d", resp.StatusCode)
	}
	if len(s.Log()) != len(tests) {
		t.Errorf("%d log entries, want one per POST (%d)", len(s.Log()), len(tests))
	}
}

func TestKillEndsStreams(t *testing.T) {
	s := New(Config{TokenGap: 20 * time.Millisecond})
	var wg sync.WaitGroup
	var broken atomic.Int32
	started := make(chan struct{}, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(chatBody("x", 1000))
			resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			buf := make([]byte, 1)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Error(err)
			}
			started <- struct{}{}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				broken.Add(1)
			}
		}()
	}
	for range 3 {
		<-started
	}
	killed := time.Now()
	s.Kill()
	wg.Wait()
	if d := time.Since(killed); d > time.Second {
		t.Errorf("streams took %v to end after Kill", d)
	}
	if broken.Load() != 3 {
		t.Errorf("%d of 3 streams saw an error", broken.Load())
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(s.URL(), "http://"), time.Second); err == nil {
		t.Error("engine still accepts connections after Kill")
	}
	for _, l := range s.Log() {
		if l.Completed || l.Aborted == "" {
			t.Errorf("log after Kill: %+v", l)
		}
	}
	s.Close() // idempotent
}

func TestCloseEndsStreams(t *testing.T) {
	s := New(Config{Slots: 1, TokenGap: 20 * time.Millisecond})
	results := make(chan streamResult, 2)
	for range 2 { // one streaming, one queued
		go func() {
			results <- runStream(t, context.Background(), s.URL(), "/v1/chat/completions", chatBody("x", 1000))
		}()
	}
	time.Sleep(100 * time.Millisecond)
	closed := time.Now()
	s.Close()
	if d := time.Since(closed); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	for range 2 {
		if r := <-results; r.done {
			t.Errorf("stream completed despite Close: %d tokens", r.tokens)
		}
	}
	for _, l := range s.Log() {
		if l.Aborted != "server" {
			t.Errorf("log after Close: %+v", l)
		}
	}
}

func TestClientDisconnectFreesSlot(t *testing.T) {
	s := New(Config{Slots: 1, TokenGap: 10 * time.Millisecond})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r := runStream(t, ctx, s.URL(), "/v1/chat/completions", chatBody("x", 1000))
	if r.readErr == nil || r.tokens == 0 {
		t.Fatalf("want a stream cut by the client after some tokens: %+v", r.readErr)
	}
	r = runStream(t, context.Background(), s.URL(), "/v1/chat/completions", chatBody("x", 3))
	if !r.done || r.tokens != 3 {
		t.Fatalf("second request: %+v", r)
	}
	if l := waitEnded(t, s, 0); l.Aborted != "client" || l.OutputTokens == 0 || l.OutputTokens >= 1000 {
		t.Errorf("log of the abandoned request: %+v", l)
	}
}
