package record

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// sentPrompt is one completion request as a proxy in front of the engine saw it.
type sentPrompt struct {
	requestID string
	text      string
}

// promptRecorder is a reverse proxy that keeps the prompt text of every
// completion request it forwards (the engine's log keeps only its length).
type promptRecorder struct {
	mu      sync.Mutex
	prompts []sentPrompt
}

func (p *promptRecorder) start(t *testing.T, target string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // stream chunks as they come
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "completions") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				Prompt   string `json:"prompt"`
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Errorf("request body: %v", err)
			}
			text := req.Prompt
			for _, m := range req.Messages {
				text += m.Content
			}
			p.mu.Lock()
			p.prompts = append(p.prompts, sentPrompt{requestID: r.Header.Get("X-Request-Id"), text: text})
			p.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMooncakeReplaySharesBlocks replays a Mooncake-format trace
// (testdata/mooncake-sample.jsonl) against the test engine: every request is
// sent at its recorded time (ms), its prompt is its blocks in order, a block id
// shared by two requests is the same text in both and blocks of different ids
// differ, and the run info records which requests share which blocks.
func TestMooncakeReplaySharesBlocks(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TTFT: 2 * time.Millisecond})
	defer eng.Close()
	var pr promptRecorder
	proxy := pr.start(t, eng.URL())
	o := baseOptions(t, proxy.URL)
	o.Concurrency = nil
	o.RequestsPerLevel = 0
	o.Replay = "testdata/mooncake-sample.jsonl"
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	lines := []struct {
		ms, input, output int
		ids               []int64
	}{
		{0, 1536, 8, []int64{0, 1, 2}},
		{0, 1100, 6, []int64{0, 3, 4}},
		{150, 700, 5, []int64{5, 6}},
		{300, 1300, 4, []int64{0, 1, 7}},
		{300, 600, 3, []int64{5, 8}},
		{450, 400, 7, []int64{9}},
		{600, 1600, 6, []int64{0, 1, 2, 10}},
	}
	rows, fi := readTrace(t, o.Output)
	if len(rows) != len(lines) || fi.Plan.ReplayFormat != "mooncake" {
		t.Fatalf("%d rows, replay format %q; want %d, mooncake", len(rows), fi.Plan.ReplayFormat, len(lines))
	}
	slices.SortFunc(rows, func(a, b trace.Row) int { return int(a.RequestID - b.RequestID) })
	first := rows[0].RequestID
	for i, r := range rows {
		l := lines[r.RequestID-first]
		if got, want := float64(r.ScheduledNs-rows[0].ScheduledNs)/1e6, float64(l.ms); math.Abs(got-want) > 1e-3 {
			t.Errorf("line %d: scheduled %.3f ms after the first, want %d ms", i+1, got, l.ms)
		}
		if lag := time.Duration(r.SentNs - r.ScheduledNs); lag > 50*time.Millisecond {
			t.Errorf("line %d: sent %v after its time", i+1, lag)
		}
		if r.Error != nil || r.PromptTokens == nil || math.Abs(float64(*r.PromptTokens-int32(l.input))) > 0.02*float64(l.input) || r.MaxTokens != int32(l.output) {
			t.Errorf("line %d: prompt %v tokens, max_tokens %d, error %v; want about %d, %d", i+1, r.PromptTokens, r.MaxTokens, r.Error, l.input, l.output)
		}
	}

	// The prompts as sent, by line; a block is a full block's words (line 1 is
	// three full blocks).
	byLine := map[int][]string{}
	for _, p := range pr.prompts {
		for _, r := range rows {
			if RequestHeaderID(fi.RunID, r.RequestID) == p.requestID {
				byLine[int(r.RequestID-first)] = strings.Fields(p.text)
			}
		}
	}
	if len(byLine) != len(lines) {
		t.Fatalf("the proxy saw prompts of %d lines, want %d", len(byLine), len(lines))
	}
	full := len(byLine[0]) / 3
	if full < 400 || full > 600 {
		t.Fatalf("a full block is %d words, want about 512 (the engine counts words)", full)
	}
	block := func(line, k int) []string {
		w := byLine[line]
		return w[k*full : min((k+1)*full, len(w))]
	}
	blockText := map[int64][]string{} // the longest text seen for each id
	for i, l := range lines {
		if n := len(byLine[i]); n < (len(l.ids)-1)*full+1 || n > len(l.ids)*full {
			t.Fatalf("line %d: %d words for %d blocks of %d", i+1, n, len(l.ids), full)
		}
		for k, id := range l.ids {
			b := block(i, k)
			prev, seen := blockText[id]
			short, long := b, prev
			if len(short) > len(long) {
				short, long = long, short
			}
			if seen && !slices.Equal(short, long[:len(short)]) {
				t.Errorf("line %d: block id %d differs from the same id sent before", i+1, id)
			}
			if len(b) > len(prev) {
				blockText[id] = b
			}
		}
	}
	for a, ta := range blockText {
		for b, tb := range blockText {
			n := min(len(ta), len(tb), 20)
			if a < b && slices.Equal(ta[:n], tb[:n]) {
				t.Errorf("blocks %d and %d begin with the same %d words", a, b, n)
			}
		}
	}

	p := info.ReplayPrefix
	if p == nil {
		t.Fatal("no replay_prefix in the run info")
	}
	wantGroup := []int32{0, 0, 2, 0, 2, 5, 0}
	wantShared := []int32{0, 1, 0, 2, 1, 0, 3}
	if p.BlockTokens != 512 || p.Requests != 7 || p.Blocks != 18 || p.UniqueBlocks != 11 || p.SharedBlockRefs != 7 || p.PrefixGroups != 3 ||
		!slices.Equal(p.Group, wantGroup) || !slices.Equal(p.SharedPrefixBlocks, wantShared) {
		t.Errorf("replay_prefix %+v; want 512-token blocks, 7 requests, 18 block references of 11 ids (7 shared), 3 groups %v, shared leading blocks %v",
			*p, wantGroup, wantShared)
	}
	if fi.ReplayPrefix == nil || !slices.Equal(fi.ReplayPrefix.SharedPrefixBlocks, wantShared) {
		t.Errorf("the trace file's run info has replay_prefix %+v", fi.ReplayPrefix)
	}
}

// TestReplayFormatLines reads single lines of each format: good ones give their
// lengths, blocks and times; a bad one an error naming the file, the line and the
// field.
func TestReplayFormatLines(t *testing.T) {
	cases := []struct {
		name, format, text string
		want               string // an error's text, or "" for none
		prompt, output     int
		ids                []int64
		offsetMs           float64
	}{
		{"mooncake", "", `{"timestamp": 0, "input_length": 655, "output_length": 52, "hash_ids": [46, 47]}` + "\n" +
			`{"timestamp": 10535, "input_length": 672, "output_length": 26, "hash_ids": [46, 47]}`, "", 672, 26, []int64{46, 47}, 10535},
		{"aiperf single turn, timestamps", "", `{"text": "a b c", "timestamp": 0}` + "\n" + `{"text": "d e", "timestamp": 250}`, "", 0, 0, nil, 250},
		{"aiperf single turn, delays", "", `{"text": "a b c", "delay": 100}` + "\n" + `{"texts": ["d", "e"], "delay": 250}`, "", 0, 0, nil, 250},
		{"ceiling's own", "", `{"timestamp": 0, "prompt_tokens": 5}` + "\n" + `{"timestamp": 2, "input_length": 7}`, "", 7, 0, nil, 2000},
		{"mooncake without timestamp", "", `{"input_length": 10, "hash_ids": [1]}`, `t.jsonl line 1 (mooncake format): field "timestamp" is missing`, 0, 0, nil, 0},
		{"mooncake blocks disagree", "", `{"timestamp": 0, "input_length": 1100, "hash_ids": [1, 2]}`, `t.jsonl line 1 (mooncake format): fields "input_length" 1100 and "hash_ids" (2 blocks of 512 tokens) disagree: the last block would hold 588 tokens`, 0, 0, nil, 0},
		{"mooncake length as text", "", `{"timestamp": 0, "input_length": 10, "hash_ids": [1]}` + "\n" + `{"timestamp": 5, "input_length": "ten", "hash_ids": [1]}`, `t.jsonl line 2 (mooncake format): field "input_length": want int, got a JSON string`, 0, 0, nil, 0},
		{"mooncake id as text", "", `{"timestamp": 0, "input_length": 10, "hash_ids": ["a"]}`, `t.jsonl line 1 (mooncake format): field "hash_ids`, 0, 0, nil, 0},
		{"mooncake no blocks", "mooncake", `{"timestamp": 0, "input_length": 10}`, `t.jsonl line 1 (mooncake format): field "hash_ids" is missing or empty`, 0, 0, nil, 0},
		{"mooncake negative time", "", `{"timestamp": -5, "input_length": 10, "hash_ids": [1]}`, `t.jsonl line 1 (mooncake format): field "timestamp" -5`, 0, 0, nil, 0},
		{"mooncake zero output", "", `{"timestamp": 0, "input_length": 10, "output_length": 0, "hash_ids": [1]}`, `field "output_length" 0`, 0, 0, nil, 0},
		{"mooncake not JSON", "", `{"timestamp": 0, "input_length": 10, "hash_ids": [1]}` + "\n\n" + `{"timestamp": 0,`, `t.jsonl line 3 (mooncake format): not a JSON object`, 0, 0, nil, 0},
		{"single turn image", "", `{"text": "x", "image": "a.png"}`, `t.jsonl line 1 (aiperf-single-turn format): fields "image"/"audio"`, 0, 0, nil, 0},
		{"single turn both times", "", `{"text": "x", "timestamp": 1, "delay": 2}`, `fields "timestamp" and "delay" cannot be set together`, 0, 0, nil, 0},
		{"unknown format", "sharegpt", `{"text": "x"}`, `Options.ReplayFormat "sharegpt"`, 0, 0, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, _, err := readReplay(strings.NewReader(c.text), "t.jsonl", c.format, 512)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v; want one containing %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last := es[len(es)-1]
			if last.promptTokens != c.prompt || last.outputTokens != c.output || !slices.Equal(last.hashIDs, c.ids) {
				t.Errorf("last entry %+v; want prompt %d, output %d, blocks %v", last, c.prompt, c.output, c.ids)
			}
			if got := float64(last.offset) / float64(time.Millisecond); math.Abs(got-c.offsetMs) > 1e-6 {
				t.Errorf("last entry at %.3f ms, want %.3f", got, c.offsetMs)
			}
		})
	}
}
