package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

// fixtureDir is the folder of real servers' captured streams, shared beside the
// repository; without it the test skips (fails under CI=true).
func fixtureDir(t testing.TB) string {
	t.Helper()
	return sharedtest.Dir(t, "sse-fixtures")
}

// streamSummary is what a whole stream adds up to.
type streamSummary struct {
	events    int
	content   int // chunks carrying answer text
	reasoning int // chunks carrying reasoning
	finish    string
	usage     [4]int32 // prompt, completion, reasoning, cached; -1 = absent
	hasErr    bool
	done      bool
}

func summarize(t testing.TB, r io.Reader) (streamSummary, error) {
	s := streamSummary{usage: [4]int32{-1, -1, -1, -1}}
	p := NewReader(r)
	for {
		ev, data, err := p.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
		s.events++
		c, err := Decode(ev, data)
		if err != nil {
			return s, err
		}
		if c.Content {
			s.content++
		}
		if c.Reasoning {
			s.reasoning++
		}
		if c.Finish != "" {
			s.finish = c.Finish
		}
		if c.Err != "" {
			s.hasErr = true
		}
		if c.Done {
			s.done = true
		}
		if u := c.Usage; u != nil {
			for i, v := range []*int32{u.PromptTokens, u.CompletionTokens, u.ReasoningTokens, u.CachedTokens} {
				s.usage[i] = -1
				if v != nil {
					s.usage[i] = *v
				}
			}
		}
	}
}

// The expectations were worked out independently of this parser (a small Python
// reading of the same files) and checked against the fixtures' INDEX.md.
func TestSSEFixtures(t *testing.T) {
	dir := fixtureDir(t)
	tests := []struct {
		file               string
		events             int
		content, reasoning int
		finish             string
		usage              [4]int32
		hasErr, done       bool
	}{
		{"alibaba-qwen3max-reasoning-content.sse", 276, 52, 220, "stop", [4]int32{24, 1355, 1084, 0}, false, true},
		{"anthropic-compat-haiku45-toolcall-index1.sse", 9, 6, 0, "tool_calls", [4]int32{-1, -1, -1, -1}, false, true},
		{"azure-gpt5nano-model-router-prompt-filter-first-chunk.sse", 9, 4, 0, "stop", [4]int32{15, 78, 64, 0}, false, true},
		{"deepseek-reasoner-reasoning-content.sse", 212, 11, 198, "stop", [4]int32{6, 212, 198, 0}, false, true},
		{"deepseek-reasoner-reasoning-toolcall.sse", 53, 11, 39, "tool_calls", [4]int32{339, 83, 39, 320}, false, true},
		{"groq-gptoss120b-error-event-midstream.sse", 95, 0, 93, "", [4]int32{-1, -1, -1, -1}, true, false},
		{"groq-gptoss120b-reasoning-channel-toolcall.sse", 26, 1, 22, "tool_calls", [4]int32{304, 49, 23, -1}, false, true},
		{"groq-llama33-toolcall-xgroq-usage.sse", 4, 1, 0, "tool_calls", [4]int32{210, 15, -1, -1}, false, true},
		{"hfrouter-novita-llama31-sla-metrics.sse", 5, 1, 0, "stop", [4]int32{40, 2, -1, -1}, false, true},
		{"mistral-magistral-content-array-thinking.sse", 5, 1, 2, "stop", [4]int32{10, 46, -1, -1}, false, true},
		{"openai-babbage002-completions-include-usage.sse", 27, 25, 0, "length", [4]int32{31, 25, -1, -1}, false, true},
		{"openai-gpt5nano-chat-include-usage-reasoning-only.sse", 4, 0, 0, "length", [4]int32{12, 100, 100, 0}, false, true},
		{"openai-gpt5nano-chat-no-usage.sse", 51, 48, 0, "stop", [4]int32{-1, -1, -1, -1}, false, true},
		{"openrouter-claude45-reasoning-keepalive-comments.sse", 15, 2, 3, "stop", [4]int32{43, 36, 13, 0}, false, true},
		{"openrouter-minimax-error-in-chunk-keepalive-comments.sse", 5, 0, 2, "length", [4]int32{43, 10, 11, 0}, true, true},
		{"tgi-3.1.2-llama31-8b-include-usage-snapshot.sse", 12, 10, 0, "length", [4]int32{40, 10, -1, -1}, false, true},
		{"vllm-0.24-crusoe-llama33-70b-include-usage.sse", 17, 13, 0, "stop", [4]int32{46, 14, -1, 0}, false, true},
		{"vllm-llama31-70b-continuous-usage-stats.sse", 29, 25, 0, "stop", [4]int32{46, 26, -1, -1}, false, true},
		{"zai-glm47-reasoning-content.sse", 94, 1, 90, "stop", [4]int32{13, 564, 561, 0}, false, true},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			// Read through a one-byte reader as well, so that events split across
			// reads are exercised.
			for _, r := range []io.Reader{bytes.NewReader(raw), &oneByteReader{raw}} {
				got, err := summarize(t, r)
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				want := streamSummary{tt.events, tt.content, tt.reasoning, tt.finish, tt.usage, tt.hasErr, tt.done}
				if got != want {
					t.Errorf("got  %+v\nwant %+v", got, want)
				}
			}
		})
	}
	// Every fixture must be covered, so that a new one cannot slip in untested.
	files, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no expectation in TestSSEFixtures", filepath.Base(f))
		}
	}
}

type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestSSEFraming(t *testing.T) {
	type ev struct{ name, data string }
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"lf", "data: a\n\ndata: b\n\n", []ev{{"", "a"}, {"", "b"}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{"", "a"}, {"", "b"}}},
		{"lone cr", "data: a\r\rdata: b\r\r", []ev{{"", "a"}, {"", "b"}}},
		{"multi-line data", "data: {\"x\":\ndata: 1}\n\n", []ev{{"", "{\"x\":\n1}"}}},
		{"comments", ": keep-alive\n\n: x\ndata: a\n: y\n\n", []ev{{"", "a"}}},
		{"no space after colon", "data:a\n\n", []ev{{"", "a"}}},
		{"event name", "event: error\ndata: {}\n\ndata: b\n\n", []ev{{"error", "{}"}, {"", "b"}}},
		{"event without data dropped", "event: ping\n\ndata: b\n\n", []ev{{"", "b"}}},
		{"missing final blank line", "data: a\n\ndata: [DONE]\n", []ev{{"", "a"}, {"", "[DONE]"}}},
		{"missing final newline", "data: a\n\ndata: [DONE]", []ev{{"", "a"}, {"", "[DONE]"}}},
		{"id and retry ignored", "id: 1\nretry: 10\ndata: a\n\n", []ev{{"", "a"}}},
		{"empty data", "data:\n\n", []ev{{"", ""}}},
		{"long line", "data: " + strings.Repeat("x", 10000) + "\n\n", []ev{{"", strings.Repeat("x", 10000)}}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), &oneByteReader{[]byte(tt.in)}} {
				p := NewReader(r)
				var got []ev
				for {
					name, data, err := p.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, ev{string(name), string(data)})
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d: got %q, want %q", i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("connection reset")
	p := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), errReader{boom}))
	if _, d, err := p.Next(); err != nil || string(d) != "a" {
		t.Fatalf("first event: %q %v", d, err)
	}
	if _, _, err := p.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read error", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestDecodeChunk(t *testing.T) {
	tests := []struct {
		name    string
		event   string
		data    string
		want    Chunk
		wantErr bool
	}{
		{"done", "", "[DONE]", Chunk{Done: true}, false},
		{"content", "", `{"choices":[{"delta":{"content":"hi"}}]}`, Chunk{Content: true}, false},
		{"empty content", "", `{"choices":[{"delta":{"content":""}}]}`, Chunk{}, false},
		{"null content", "", `{"choices":[{"delta":{"content":null,"role":"assistant"}}]}`, Chunk{}, false},
		{"reasoning_content", "", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, Chunk{Reasoning: true}, false},
		{"reasoning", "", `{"choices":[{"delta":{"reasoning":"hm","content":""}}]}`, Chunk{Reasoning: true}, false},
		{"completions text", "", `{"choices":[{"text":"x","finish_reason":null}]}`, Chunk{Content: true}, false},
		{"finish", "", `{"choices":[{"delta":{},"finish_reason":"length"}]}`, Chunk{Finish: "length"}, false},
		{"error event", "error", `{"error":{"message":"boom","code":"c1"}}`, Chunk{Err: "server error: c1: boom"}, false},
		{"error object", "", `{"error":{"message":"boom","type":"t"}}`, Chunk{Err: "server error: t: boom"}, false},
		{"error string", "", `{"error":"plain"}`, Chunk{Err: "server error: plain"}, false},
		{"null error", "", `{"error":null,"choices":[]}`, Chunk{}, false},
		{"malformed", "", `{"choices":[{"delta":`, Chunk{}, true},
		{"not an object", "", `[1,2]`, Chunk{}, true},
		{"empty", "", ``, Chunk{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.event), []byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (got.Done != tt.want.Done || got.Content != tt.want.Content ||
				got.Reasoning != tt.want.Reasoning || got.Finish != tt.want.Finish || got.Err != tt.want.Err) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeUsage(t *testing.T) {
	c, err := Decode(nil, []byte(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,`+
		`"completion_tokens_details":{"reasoning_tokens":5},"prompt_tokens_details":{"cached_tokens":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Usage
	if u == nil || *u.PromptTokens != 10 || *u.CompletionTokens != 20 || *u.ReasoningTokens != 5 || *u.CachedTokens != 3 {
		t.Fatalf("usage = %+v", u)
	}
}

// FuzzParseSSE feeds arbitrary bytes to the parser and decoder: they must never panic
// nor loop, whatever a server sends. The seed corpus is the real servers' streams
// (read at fuzz time) plus the hand-written seeds in testdata/fuzz/FuzzParseSSE.
func FuzzParseSSE(f *testing.F) {
	// Without the shared streams the hand-written seeds still run.
	if dir, err := sharedtest.Find("sse-fixtures"); err == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
		for _, file := range files {
			if raw, err := os.ReadFile(file); err == nil {
				// Large seeds make the fuzzer spend its time minimizing them: the
				// first 4 KiB of each stream holds its framing and chunk shapes.
				f.Add(raw[:min(len(raw), 4<<10)])
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p := NewReader(bytes.NewReader(in))
		total := 0
		for i := 0; ; i++ {
			ev, data, err := p.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("unexpected error on in-memory input: %v", err)
				}
				break
			}
			total += len(data)
			if i > len(in)+1 || total > len(in) {
				t.Fatalf("parser produced more than its input (%d events, %d bytes)", i, total)
			}
			_, _ = Decode(ev, data)
			checkFastMatchesSlow(t, data)
		}
		checkFastMatchesSlow(t, in)
	})
}

// checkFastMatchesSlow: whenever the fast path decides, encoding/json must agree.
func checkFastMatchesSlow(t *testing.T, data []byte) {
	t.Helper()
	trimmed := bytes.TrimSpace(data)
	fast, ok := fastChunk(trimmed)
	if !ok {
		return
	}
	slow, err := slowChunk(trimmed)
	if err != nil {
		t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", trimmed, err)
	}
	if fast.Content != slow.Content || fast.Reasoning != slow.Reasoning || fast.Finish != slow.Finish ||
		slow.Usage != nil || slow.Err != "" {
		t.Fatalf("fast %+v, slow %+v for %q", fast, slow, trimmed)
	}
}

func TestFastChunkAgreesOnFixtures(t *testing.T) {
	dir := fixtureDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
	fast := 0
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		p := NewReader(bytes.NewReader(raw))
		for {
			_, data, err := p.Next()
			if err != nil {
				break
			}
			checkFastMatchesSlow(t, data)
			if _, ok := fastChunk(bytes.TrimSpace(data)); ok {
				fast++
			}
		}
	}
	// Most real chunks must take the fast path, or it is not worth having.
	if fast < 800 {
		t.Errorf("only %d fixture chunks took the fast path", fast)
	}
}

func TestFastChunkDeclines(t *testing.T) {
	for _, in := range []string{
		`{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"content":[{"type":"text","text":"a"}]}}]}`,
		`{"choices":[],"choices":[{"delta":{"content":"a"}}]}`,
		`{"Choices":[{"delta":{"content":"a"}}]}`,
		`{"choices":[{"delta":{"content":"a"}}]}x`,
		`{"choices":[{"delta":{"content":"a"`,
		`{"choices":[{"delta":{"content":"a"}}],"n":01}`,
		`{"error":{"message":"x"}}`,
	} {
		if c, ok := fastChunk([]byte(in)); ok {
			t.Errorf("fast path decided %q as %+v; it must leave it to encoding/json", in, c)
		}
	}
}

// Item 5: usage counts that are not whole numbers within int32 are left out and
// named, never stored wrapped.
func TestDecodeUsageOutOfRange(t *testing.T) {
	tests := []struct {
		usage   string
		want    *int32
		invalid string
	}{
		{`{"completion_tokens":12}`, ptr32(12), ""},
		{`{"completion_tokens":2147483647}`, ptr32(2147483647), ""},
		{`{"completion_tokens":2147483648}`, nil, "completion_tokens 2.147483648e+09"},
		{`{"completion_tokens":70000000000}`, nil, "completion_tokens 7e+10"},
		{`{"completion_tokens":-5}`, nil, "completion_tokens -5"},
		{`{"completion_tokens":2.5}`, nil, "completion_tokens 2.5"},
		{`{"completion_tokens":1e400}`, nil, ""}, // not a float64: the chunk is malformed
	}
	for _, tt := range tests {
		c, err := Decode(nil, []byte(`{"choices":[],"usage":`+tt.usage+`}`))
		if tt.usage == `{"completion_tokens":1e400}` {
			if err == nil && c.Usage != nil && c.Usage.CompletionTokens != nil {
				t.Errorf("%s: stored %d", tt.usage, *c.Usage.CompletionTokens)
			}
			continue
		}
		if err != nil || c.Usage == nil {
			t.Fatalf("%s: %v", tt.usage, err)
		}
		got := c.Usage.CompletionTokens
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: completion tokens %v, want %v", tt.usage, got, tt.want)
		}
		if inv := strings.Join(c.Usage.Invalid, ","); inv != tt.invalid {
			t.Errorf("%s: invalid %q, want %q", tt.usage, inv, tt.invalid)
		}
	}
}

func ptr32(v int32) *int32 { return &v }
