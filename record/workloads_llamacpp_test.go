package record

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// TestLlamaCppLengthDistributions records lognormal prompts and uniform outputs
// (with ignore_eos) on llama.cpp and checks the recorded lengths' fit.
func TestLlamaCppLengthDistributions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real llama-server")
	}
	url := startLlama(t, 4, 8192)
	o := Options{URL: url, Concurrency: []int{4}, RequestsPerLevel: 120,
		PromptLengths: "lognormal:120,0.5", OutputLengths: "uniform:4-24", IgnoreEOS: true,
		Output: filepath.Join(t.TempDir(), "dist.parquet"), Timeout: 30 * time.Second, Seed: 5, Version: "test"}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	var prompt, output []float64
	for _, r := range rows {
		if r.Error != nil {
			t.Fatalf("request %d: %s", r.RequestID, *r.Error)
		}
		prompt = append(prompt, float64(*r.PromptTokens))
		output = append(output, float64(*r.OutputTokens))
	}
	checkFit(t, "llama.cpp prompt_tokens", prompt, o.PromptLengths)
	checkFit(t, "llama.cpp output_tokens", output, o.OutputLengths)
	t.Logf("%s; output control: %s", info.Workload, info.OutputControl)
}

// TestLlamaCppConversationsHitThePromptCache runs 4-turn conversations on llama.cpp:
// each turn resends the history, which its prompt cache serves, so cached_tokens
// rises with the turn, and the analysis reports the prefix-hit share.
func TestLlamaCppConversationsHitThePromptCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real llama-server")
	}
	// 2 workers on 4 slots: a conversation finds its previous turn's slot.
	url := startLlama(t, 4, 8192)
	o := Options{URL: url, Concurrency: []int{2}, RequestsPerLevel: 16, Turns: 4,
		PromptTokens: 60, OutputTokens: 12, IgnoreEOS: true,
		Output: filepath.Join(t.TempDir(), "conv.parquet"), Timeout: 30 * time.Second, Seed: 9, Version: "test"}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	byTurn := map[int32][]trace.Row{}
	for _, r := range rows {
		if r.Error != nil || r.Turn == nil {
			t.Fatalf("request %d: error %v, turn %v", r.RequestID, r.Error, r.Turn)
		}
		if r.CachedTokens == nil {
			t.Fatalf("request %d: llama.cpp reported no cached_tokens", r.RequestID)
		}
		byTurn[*r.Turn] = append(byTurn[*r.Turn], r)
	}
	meanCached := func(rs []trace.Row) float64 {
		s := 0.0
		for _, r := range rs {
			s += float64(*r.CachedTokens)
		}
		return s / float64(len(rs))
	}
	prev := -1.0
	for turn := int32(1); turn <= 4; turn++ {
		m := meanCached(byTurn[turn])
		t.Logf("turn %d: %d requests, mean cached_tokens %.0f", turn, len(byTurn[turn]), m)
		if turn > 1 && m <= prev {
			t.Errorf("turn %d: mean cached_tokens %.0f, not above turn %d's %.0f", turn, m, turn-1, prev)
		}
		prev = m
	}
	a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := a.Runs[0].Levels[0].Workload
	if w == nil || w.PrefixHitShare == nil || len(w.Turns) != 4 {
		t.Fatalf("analysis workload: %+v", w)
	}
	first, last := w.Turns[0], w.Turns[3]
	t.Logf("prefix-hit share %.2f; turn 1 %.2f, turn 4 %.2f; TTFT p50 turn 1 %.1f ms, turn 4 %.1f ms",
		*w.PrefixHitShare, deref(first.PrefixHitShare), deref(last.PrefixHitShare), 1e3*deref(first.TTFT.P50), 1e3*deref(last.TTFT.P50))
	if *w.PrefixHitShare < 0.3 || deref(last.PrefixHitShare) < 0.5 || deref(last.PrefixHitShare) <= deref(first.PrefixHitShare) {
		t.Errorf("prefix-hit share %.2f (turn 1 %.2f, turn 4 %.2f): the history is not served from the cache",
			*w.PrefixHitShare, deref(first.PrefixHitShare), deref(last.PrefixHitShare))
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
