package analyze

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestServerBindingBatch: llama.cpp reports 4 slots and runs all 4 at c=8 while 4
// requests wait. Whatever the client's decode plateau drew, the batch ceiling is the
// server's 4; a client ceiling near the slots is named after them and given their
// figure (a loaded machine's knee of 3.8 became "batch 3.8", or a batch binding with
// ceilings.batch null); a ceiling well below the slots keeps its own name.
func TestServerBindingBatch(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	levels := []Level{
		{Level: 0, Concurrency: 4, Requests: 40, DecodeConcurrency: 3.4,
			Server: &ServerCounters{RunningMean: f(3.5), RunningMax: f(4), WaitingMean: f(0), WaitingMax: f(0)}},
		{Level: 1, Concurrency: 8, Requests: 40, DecodeConcurrency: 3.5, WaitingConcurrency: 4.4,
			Server: &ServerCounters{RunningMean: f(4), RunningMax: f(4), WaitingMean: f(4), WaitingMax: f(4)}},
	}
	server, _ := json.Marshal(map[string]any{"slots": 4})
	for _, tc := range []struct {
		name        string
		ceiling     Ceiling
		batch       *float64
		wantBinding string
		wantValue   float64
		wantNote    string
	}{
		{"knee at the slots, no client batch", Ceiling{Concurrency: f(4), Binding: "knee"}, nil, "batch", 4, "the server's counters show the binding limit"},
		{"knee just under the slots", Ceiling{Concurrency: f(3.9), Binding: "knee"}, nil, "batch", 4, "the server's counters show the binding limit"},
		{"knee well below the slots", Ceiling{Concurrency: f(2), Binding: "knee"}, nil, "knee", 2, "fill only above this ceiling"},
		{"client batch already 4", Ceiling{Concurrency: f(4), Binding: "batch"}, f(4), "batch", 4, "pinned at its 4 slots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Levels: levels, Server: server, Ceiling: tc.ceiling}
			r.Ceilings.Batch = tc.batch
			ev := serverBinding(r, levels)
			if r.ServerBinding == nil || r.ServerBinding.Limit != "batch" {
				t.Fatalf("server binding %+v, want batch", r.ServerBinding)
			}
			if r.Ceilings.Batch == nil || *r.Ceilings.Batch != 4 {
				t.Errorf("ceilings.batch %s, want the server's 4 slots", show(r.Ceilings.Batch))
			}
			if r.Ceiling.Binding != tc.wantBinding || r.Ceiling.Concurrency == nil || *r.Ceiling.Concurrency != tc.wantValue {
				t.Errorf("ceiling %s %s, want %s %g", r.Ceiling.Binding, show(r.Ceiling.Concurrency), tc.wantBinding, tc.wantValue)
			}
			if !strings.Contains(strings.Join(ev, "\n"), tc.wantNote) {
				t.Errorf("evidence %q lacks %q", ev, tc.wantNote)
			}
		})
	}
}

func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// TestServerBindingKVSaysPrefixSharing: the CI failure of TestSharedPrefixKVCeiling
// under load: the client side named batch, the server's counters (KV usage 85%,
// requests waiting) named kv, and the KV-bound ceiling's evidence lost what the
// cache holds, the shared prefix counted once.
func TestServerBindingKVSaysPrefixSharing(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	levels := []Level{{Level: 0, Concurrency: 25, Requests: 80, DecodeConcurrency: 19.9, WaitingConcurrency: 4.5,
		Server: &ServerCounters{KVUsageMax: f(0.85), WaitingMean: f(0.6), RunningMean: f(20), RunningMax: f(24)}}}
	const text = "shared prefixes counted once: 2,000 of each request's 2,200 tokens"
	r := &Run{Levels: levels, Ceiling: Ceiling{Concurrency: f(24), Binding: "batch"},
		Capacity: &Capacity{PrefixSharing: &PrefixSharing{Credited: true, Text: text}}}
	ev := strings.Join(serverBinding(r, levels), "\n")
	if r.Ceiling.Binding != "kv" {
		t.Fatalf("binding %q, want kv from the server's counters", r.Ceiling.Binding)
	}
	if !strings.Contains(ev, text) {
		t.Errorf("KV-bound evidence lacks the prefix sharing:\n%s", ev)
	}
}
