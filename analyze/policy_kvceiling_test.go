package analyze

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
)

// kvLevel is a level with a prompt length and, optionally, KV failures.
func kvLevel(c int, tokS, decode, waiting, prompt float64, kvFailed, requests int) Level {
	l := level(c, tokS, decode, waiting, 0.1)
	l.MeanPromptTokens = prompt
	l.Requests = requests
	if kvFailed > 0 {
		l.Errors = kvFailed
		l.ErrorKinds = map[string]int{KindKVExhausted: kvFailed}
		l.ErrorGroups = []ErrorGroup{{Kind: KindKVExhausted, Message: "server error: Context size has been exceeded.", Count: kvFailed}}
		l.Valid = false
		l.InvalidReason = "too few completions"
	}
	return l
}

// TestLlamaKVLayouts: llama.cpp's KV capacity as its layout gives it, told from what
// the server did, and the verdict that follows.
func TestLlamaKVLayouts(t *testing.T) {
	opt := Options{BudgetInput: capacity.BudgetInput{ReserveGiB: -1}}
	tests := []struct {
		name     string
		slots    int64
		nCtx     int64
		mean     float64
		levels   []Level
		layout   string
		capacity int64 // 0: none declared
		kv       float64
		binding  string
		value    float64
		evidence string
	}{
		{
			// 16 slots sharing 2048 tokens, requests of ~300 tokens: the cache holds
			// ~6.8; at 8 and 16 the server fails most requests with its own words.
			name: "unified, cache binds before the slots", slots: 16, nCtx: 2048, mean: 300,
			levels: []Level{kvLevel(1, 20, 0.9, 0.1, 200, 0, 32), kvLevel(2, 38, 1.8, 0.2, 200, 0, 32), kvLevel(4, 70, 3.6, 0.4, 200, 0, 32),
				kvLevel(8, 20, 2, 1, 200, 30, 32), kvLevel(16, 10, 1, 2, 200, 60, 64)},
			layout: LayoutUnified, capacity: 2048, kv: 2048.0 / 300, binding: "kv", value: 2048.0 / 300,
			evidence: "ran out of KV cache at c=8 (30 of 32 requests failed with «server error: Context size has been exceeded.»)",
		},
		{
			// 4 slots of 256 each; at 4 the slots held ~3.6 × 200 = 720 tokens > 256:
			// each slot owns its cache. The slot count binds.
			name: "per slot", slots: 4, nCtx: 256, mean: 240,
			levels: []Level{kvLevel(1, 20, 0.9, 0.1, 200, 0, 32), kvLevel(2, 38, 1.8, 0.2, 200, 0, 32), kvLevel(4, 70, 3.6, 0.4, 200, 0, 32),
				kvLevel(8, 71, 3.6, 4.4, 200, 0, 32), kvLevel(16, 71, 3.6, 12.4, 200, 0, 64)},
			layout: LayoutPerSlot, capacity: 1024, binding: "batch", value: 4, evidence: "holds one request",
		},
		{
			// The bundled sample's server: 4 slots, n_ctx 2048 each, 384-token
			// requests. Either layout holds at least 4 requests: batch 4, no KV figure.
			name: "slot-bound, layout unknown", slots: 4, nCtx: 2048, mean: 384,
			levels: []Level{kvLevel(1, 43, 0.88, 0.12, 256, 0, 48), kvLevel(2, 51, 1.73, 0.27, 256, 0, 48), kvLevel(4, 91, 3.06, 0.94, 256, 0, 48),
				kvLevel(8, 88, 3.06, 4.94, 256, 0, 48), kvLevel(16, 90, 3.08, 12.9, 256, 0, 48)},
			layout: LayoutUnknown, binding: "batch", value: 4, evidence: "the 4 slots bind before it",
		},
	}
	for _, tt := range tests {
		r := &Run{Levels: tt.levels}
		facts := serverFacts{Kind: "llamacpp", Slots: ip(tt.slots), NCtx: ip(tt.nCtx), KVCapacityTokens: ip(tt.slots * tt.nCtx)}
		if err := modelRun(r, facts, workloadTokens{Mean: tt.mean, P99: tt.mean}, opt); err != nil {
			t.Fatal(err)
		}
		c := r.Capacity
		if c == nil || c.Layout != tt.layout {
			t.Errorf("%s: capacity %+v, want layout %s", tt.name, c, tt.layout)
			continue
		}
		switch {
		case tt.capacity == 0 && c.KVCapacityTokens != nil:
			t.Errorf("%s: capacity %d, want none declared (bounds %v-%v)", tt.name, *c.KVCapacityTokens, c.KVCapacityMinTokens, c.KVCapacityMaxTokens)
		case tt.capacity > 0 && (c.KVCapacityTokens == nil || *c.KVCapacityTokens != tt.capacity || c.Source != "declared"):
			t.Errorf("%s: capacity %v (%s), want %d declared", tt.name, c.KVCapacityTokens, c.Source, tt.capacity)
		}
		if tt.kv > 0 && (r.Ceilings.KV == nil || *r.Ceilings.KV != tt.kv) {
			t.Errorf("%s: kv ceiling %v, want %v", tt.name, r.Ceilings.KV, tt.kv)
		}
		if tt.kv == 0 && r.Ceilings.KV != nil {
			t.Errorf("%s: kv ceiling %v, want none (no pooled figure)", tt.name, *r.Ceilings.KV)
		}
		if r.Ceiling.Binding != tt.binding || r.Ceiling.Concurrency == nil || *r.Ceiling.Concurrency != tt.value {
			t.Errorf("%s: ceiling %s %v, want %s %v", tt.name, r.Ceiling.Binding, r.Ceiling.Concurrency, tt.binding, tt.value)
		}
		if ev := strings.Join(r.Ceiling.Evidence, "\n"); !strings.Contains(ev, tt.evidence) {
			t.Errorf("%s: evidence lacks %q:\n%s", tt.name, tt.evidence, ev)
		}
		if strings.Contains(strings.Join(r.Ceiling.Evidence, "\n"), "holds 21.3") {
			t.Errorf("%s: a pooled figure in the evidence", tt.name)
		}
	}
}

// TestKVPrediction: a KV figure beyond the last valid level is a prediction, never
// the realistic ceiling (the H100 peer sweep: valid to 32, modelled ~315).
func TestKVPrediction(t *testing.T) {
	levels := []Level{level(1, 100, 1, 0, 0.1), level(2, 195, 2, 0, 0.1), level(4, 380, 4, 0, 0.1), level(8, 740, 8, 0, 0.1),
		level(16, 1400, 16, 0, 0.1), level(32, 2500, 32, 0, 0.1)}
	bad := level(256, 2590, 20, 0, 0.3)
	bad.Valid, bad.InvalidReason = false, "arrival-limited"
	levels = append(levels, bad)
	r := &Run{Levels: levels}
	opt := Options{ModelConfig: "../samples/models/llama-3.1-8b.json", BudgetInput: capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1}}
	if err := modelRun(r, serverFacts{}, workloadTokens{Mean: 1450, P99: 1480}, opt); err != nil {
		t.Fatal(err)
	}
	if r.Ceilings.KV == nil || *r.Ceilings.KV < 100 {
		t.Fatalf("kv figure %v, want the model's (hundreds)", r.Ceilings.KV)
	}
	if r.Ceiling.Binding == "kv" || (r.Ceiling.Concurrency != nil && *r.Ceiling.Concurrency > 32) {
		t.Errorf("realistic ceiling %s %v beyond the valid data", r.Ceiling.Binding, r.Ceiling.Concurrency)
	}
	p := r.Ceiling.Prediction
	if p == nil || p.Limit != "kv" || p.ValidUpTo != 32 || !strings.Contains(p.Text, "not reached by valid data up to concurrency 32") {
		t.Errorf("prediction %+v", p)
	}
}

// TestSlotBatch: the batch ceiling is the server's slot count when the client's
// decode plateau lies at it (a loaded machine shows 3.06 of 4), and stays measured
// when the plateau is far below.
func TestSlotBatch(t *testing.T) {
	for _, tt := range []struct {
		v     float64
		slots *int64
		want  float64
	}{
		{3, ip(4), 4}, {4, ip(4), 4}, {2, ip(16), 2}, {3, nil, 3}, {6, ip(4), 6},
	} {
		if got, ev := slotBatch(tt.v, "client", tt.slots); got != tt.want || !strings.Contains(ev, "client") {
			t.Errorf("slotBatch(%v, %v) = %v %q, want %v", tt.v, tt.slots, got, ev, tt.want)
		}
	}
}

// TestContextExceededNote: requests refused as longer than a slot are named with the
// server's words in the evidence, beside the slot count.
func TestContextExceededNote(t *testing.T) {
	levels := []Level{kvLevel(1, 20, 0.9, 0.1, 200, 0, 32), kvLevel(2, 38, 1.8, 0.2, 200, 0, 32), kvLevel(4, 70, 3.6, 0.4, 200, 0, 32),
		kvLevel(8, 71, 3.6, 4.4, 200, 0, 32)}
	levels[3].Errors = 3
	levels[3].ErrorKinds = map[string]int{KindContextExceeded: 3}
	levels[3].ErrorGroups = []ErrorGroup{{Kind: KindContextExceeded, Message: "HTTP 400 Bad Request: request (300 tokens) exceeds the available context size (256 tokens), try increasing it", Count: 3}}
	r := &Run{Levels: levels}
	facts := serverFacts{Kind: "llamacpp", Slots: ip(4), NCtx: ip(256)}
	if err := modelRun(r, facts, workloadTokens{Mean: 240, P99: 300}, Options{BudgetInput: capacity.BudgetInput{ReserveGiB: -1}}); err != nil {
		t.Fatal(err)
	}
	ev := strings.Join(r.Ceiling.Evidence, "\n")
	if r.Ceiling.Binding != "batch" || !strings.Contains(ev, "3 requests were longer than a sequence's context") || !strings.Contains(ev, "exceeds the available context size (256 tokens)") {
		t.Errorf("ceiling %s, evidence:\n%s", r.Ceiling.Binding, ev)
	}
}
