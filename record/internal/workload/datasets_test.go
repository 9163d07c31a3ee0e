package workload

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// words counts tokens as words, like the test engine.
func countWords(_ context.Context, s string) (int, error) { return len(strings.Fields(s)), nil }

func TestReadDatasetFormats(t *testing.T) {
	tests := []struct {
		name, in   string
		format     string
		entries    int
		skipped    int
		firstText  string // the first entry's prompt text ("" when messages)
		firstMsgs  int
		firstAns   string
		firstLimit int
	}{
		{"sharegpt array", `[{"id":"a","conversations":[{"from":"human","value":"hi there"},{"from":"gpt","value":"hello you two"}]},
			{"id":"b","conversations":[{"from":"gpt","value":"no human"}]},
			{"id":"c","conversations":[{"from":"system","value":"be brief"},{"from":"human","value":"why"},{"from":"gpt","value":"because"}]}]`,
			"sharegpt", 2, 1, "hi there", 0, "hello you two", 0},
		{"sharegpt jsonl", `{"conversations":[{"from":"human","value":"q1"},{"from":"gpt","value":"a1"},{"from":"human","value":"q2"}]}` + "\n",
			"sharegpt", 1, 0, "q1", 0, "a1", 0},
		{"messages with answer", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"assistant","content":"the answer"}]}
{"messages":[{"role":"user","content":"only a question"}],"max_tokens":7}
`, "messages", 2, 0, "", 2, "the answer", 0},
		{"plain prompts", `{"prompt":"one two"}` + "\n\n" + `{"prompt":"three","max_tokens":5}`, "prompt", 2, 0, "one two", 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := readDataset(strings.NewReader(tt.in), "test")
			if err != nil {
				t.Fatal(err)
			}
			if d.Format != tt.format || len(d.Entries) != tt.entries || d.Skipped != tt.skipped {
				t.Fatalf("format %s, %d entries, %d skipped; want %s, %d, %d", d.Format, len(d.Entries), d.Skipped, tt.format, tt.entries, tt.skipped)
			}
			e := d.Entries[0]
			if e.Prompt.Text != tt.firstText || len(e.Prompt.Messages) != tt.firstMsgs || e.Answer != tt.firstAns {
				t.Errorf("first entry: text %q, %d messages, answer %q", e.Prompt.Text, len(e.Prompt.Messages), e.Answer)
			}
		})
	}
}

func TestReadDatasetErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "{\"prompt\": \"a\"}\nnope\n", "test line 2: not a JSON object"},
		{"both", `{"prompt":"a","messages":[{"role":"user","content":"b"}]}`, "more than one of"},
		{"no role", `{"messages":[{"content":"b"}]}`, "messages[0] is not an object with a role"},
		{"bad max", `{"prompt":"a","max_tokens":0}`, "max_tokens must be positive"},
		{"unknown", `{"text":"a"}`, `want {"prompt": ...}`},
		{"empty", "\n\n", "no prompts"},
		{"bad array", `[{"conversations":[{"from":"human","value":"x"}]}, 3]`, "element 1: not a JSON object"},
	}
	for _, tt := range tests {
		_, err := readDataset(strings.NewReader(tt.in), "test")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNewDatasetLengthsFilterAndCap(t *testing.T) {
	in := `[{"conversations":[{"from":"human","value":"a b c d"},{"from":"gpt","value":"1 2 3 4 5 6"}]},
	{"conversations":[{"from":"human","value":"a"},{"from":"gpt","value":"1 2 3 4 5 6"}]},
	{"conversations":[{"from":"human","value":"a b c d e f g h i j"},{"from":"gpt","value":"1 2 3 4 5 6 7 8 9 10 11 12"}]},
	{"conversations":[{"from":"human","value":"a b c"},{"from":"gpt","value":"1 2 3"}]}]`
	d, err := readDataset(strings.NewReader(in), "test")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFilter("min-prompt=2")
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewDataset(context.Background(), d, DatasetConfig{MaxTokens: 99, Filter: f, MaxTotal: 20}, countWords, "words")
	if err != nil {
		t.Fatal(err)
	}
	// Entry 2 has a 1-token prompt (filtered), entry 3 22 tokens in all (capped).
	type got struct{ target, max int }
	var gs []got
	for id := range int64(4) {
		p, mt := w.Prompt(id, id)
		gs = append(gs, got{p.TargetTokens, mt})
	}
	want := []got{{4, 6}, {3, 3}, {4, 6}, {3, 3}}
	for i := range want {
		if gs[i] != want[i] {
			t.Errorf("request %d: target %d, max_tokens %d; want %v (the dataset's own lengths)", i, gs[i].target, gs[i].max, want[i])
		}
	}
	// A drawn output length replaces the answers' lengths.
	out, _ := ParseLengths("uniform:10-20")
	w, err = NewDataset(context.Background(), d, DatasetConfig{MaxTokens: 99, Output: out}, countWords, "words")
	if err != nil {
		t.Fatal(err)
	}
	for id := range int64(8) {
		if _, mt := w.Prompt(id, id); mt < 10 || mt > 20 {
			t.Errorf("request %d: max_tokens %d outside uniform:10-20", id, mt)
		}
	}
	if _, err := NewDataset(context.Background(), d, DatasetConfig{Filter: Filter{MinPrompt: 100}}, countWords, ""); err == nil {
		t.Error("a filter that keeps nothing is not an error")
	}
}

func TestParseFilterErrors(t *testing.T) {
	for _, in := range []string{"min-prompt", "min-prompt=x", "max-len=3", "min-output=-1"} {
		if _, err := ParseFilter(in); err == nil || !strings.Contains(err.Error(), "min-prompt=N") {
			t.Errorf("ParseFilter(%q) error %v, want the syntax", in, err)
		}
	}
}

func TestConversationHistory(t *testing.T) {
	l, _ := ParseLengths("20")
	w, err := NewSynthetic(context.Background(), Config{Seed: 1, Prompt: l, Output: l}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conversation(100)
	p1, _ := c.Next(100, 0)
	c.Answer("the answer one", p1.TargetTokens, 30, 20, 3)
	p2, _ := c.Next(101, 1)
	if len(p1.Messages) != 1 || len(p2.Messages) != 3 || c.Turn() != 2 || c.ID() != 100 {
		t.Fatalf("turn 1 has %d messages, turn 2 %d (turn %d)", len(p1.Messages), len(p2.Messages), c.Turn())
	}
	var m struct{ Role, Content string }
	if err := json.Unmarshal(p2.Messages[1], &m); err != nil || m.Role != "assistant" || m.Content != "the answer one" {
		t.Errorf("turn 2's history holds %+v, want the first answer", m)
	}
	if p2.TargetTokens != 30+3+20 {
		t.Errorf("turn 2 target %d, want the history's 33 tokens + 20", p2.TargetTokens)
	}
	if string(p2.Messages[0]) != string(p1.Messages[0]) {
		t.Error("turn 2 does not resend turn 1's message unchanged")
	}
}

// TestSharedPrefixMix checks that K distinct prefixes lead the prompts in the
// proportions of the mix, and that the unique part after them differs per request.
func TestSharedPrefixMix(t *testing.T) {
	l, _ := ParseLengths("uniform:40-80")
	w, err := NewSynthetic(context.Background(), Config{Seed: 2, Prompt: l, Output: l, SharedPrefix: 20, Prefixes: 3, Mix: []float64{0.6, 0.3, 0.1}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.prefixes) != 3 || w.prefixes[0] == w.prefixes[1] || w.prefixes[1] == w.prefixes[2] {
		t.Fatalf("prefixes not distinct: %q", w.prefixes)
	}
	count := map[int]int{}
	const n = 3000
	for id := range int64(n) {
		p, _ := w.Prompt(id, id)
		k := -1
		for i, pre := range w.prefixes {
			if strings.HasPrefix(p.Text, pre) {
				k = i
			}
		}
		if k < 0 {
			t.Fatalf("request %d starts with no prefix: %.60q", id, p.Text)
		}
		count[k]++
	}
	for i, want := range []float64{0.6, 0.3, 0.1} {
		if got := float64(count[i]) / n; got < want-0.03 || got > want+0.03 {
			t.Errorf("prefix %d used by %.3f of requests, want %.1f", i, got, want)
		}
	}
	if _, err := NewSynthetic(context.Background(), Config{Seed: 2, Prompt: l, Output: l, SharedPrefix: 60}, nil, ""); err == nil {
		t.Error("a shared prefix longer than the shortest prompts is not an error")
	}
}
