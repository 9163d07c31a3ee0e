package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/engine"
)

// TestPrefixDemand: where the shared length comes from, which engines are
// credited, the engine's block rounding, and the concurrency with each prefix
// held once per cache.
func TestPrefixDemand(t *testing.T) {
	share, prompt := 0.5, 1000.0
	served := []Level{{Workload: &Workload{CachedRequests: 10, PrefixHitShare: &share, Prompt: Summary{Mean: &prompt}}}}
	i64 := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name     string
		kind     engine.Name
		block    *int64
		prefix   prefixWorkload
		levels   []Level
		nilWant  bool
		credited bool
		source   string
		counted  float64
		text     string
	}{
		{name: "vLLM, the workload's prefix", kind: engine.VLLM, prefix: prefixWorkload{SharedTokens: 2000, Prefixes: 1, Known: true},
			credited: true, source: "workload", counted: 2000, text: "shared prefixes counted once"},
		{name: "vLLM rounds to full blocks", kind: engine.VLLM, prefix: prefixWorkload{SharedTokens: 2010, Prefixes: 1, Known: true},
			credited: true, source: "workload", counted: 2000},
		{name: "the server's declared block size", kind: engine.VLLM, block: i64(32), prefix: prefixWorkload{SharedTokens: 2010, Prefixes: 1, Known: true},
			credited: true, source: "workload", counted: 1984},
		{name: "SGLang is token-granular", kind: engine.SGLang, prefix: prefixWorkload{SharedTokens: 2010, Prefixes: 1, Known: true},
			credited: true, source: "workload", counted: 2010},
		{name: "llama.cpp shares nothing across requests", kind: engine.LlamaCpp, prefix: prefixWorkload{SharedTokens: 2000, Prefixes: 1, Known: true},
			source: "workload", text: "llama.cpp shares no prefix across requests"},
		{name: "an unknown engine gets no credit", kind: engine.Unknown, prefix: prefixWorkload{SharedTokens: 2000, Prefixes: 1, Known: true},
			source: "workload", text: "not known to share"},
		{name: "an imported run: the server's cached tokens", kind: engine.VLLM, levels: served,
			credited: true, source: "server", counted: 496},
		{name: "own unique prompts: cached tokens are history, not shared", kind: engine.VLLM, prefix: prefixWorkload{Prefixes: 1, Turns: 4, Known: true},
			levels: served, nilWant: true},
		{name: "no prefix at all", kind: engine.VLLM, nilWant: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := prefixDemand(serverFacts{Kind: tc.kind, BlockSize: tc.block}, workloadTokens{Mean: 2200, Prefix: tc.prefix}, tc.levels)
			if tc.nilWant {
				if ps != nil {
					t.Fatalf("got %+v, want none", ps)
				}
				return
			}
			if ps == nil || ps.Credited != tc.credited || ps.Source != tc.source || ps.CountedTokens != tc.counted {
				t.Fatalf("got %+v; want credited %v, source %q, counted %v", ps, tc.credited, tc.source, tc.counted)
			}
			if !tc.credited && !strings.Contains(ps.Text, tc.text) {
				t.Errorf("text %q lacks %q", ps.Text, tc.text)
			}
		})
	}
}

// TestApplyPrefixSharing: 2,000 shared + 200 own tokens in a cache of 8,000
// tokens hold (8,000 − 2,000) / 200 = 30 requests, not 8,000 / 2,200; two
// prefixes cost a second copy; the unshared figure stays beside it.
func TestApplyPrefixSharing(t *testing.T) {
	at := func(tokens float64) float64 { return 8000 / tokens }
	for _, tc := range []struct {
		prefixes int
		want     float64
	}{{1, 30}, {2, 20}, {4, 8000.0 / 2200}} {
		kv := int64(8000)
		before := at(2200)
		c := &Capacity{KVCapacityTokens: &kv, ConcurrencyAtMeanRequest: &before}
		ps := &PrefixSharing{Source: "workload", SharedTokens: 2000, CountedTokens: 2000, BlockTokens: 16, Prefixes: tc.prefixes, Credited: true}
		applyPrefixSharing(c, ps, at, workloadTokens{Mean: 2200})
		if got := *c.ConcurrencyAtMeanRequest; math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%d prefixes: %.3f requests, want %.3f", tc.prefixes, got, tc.want)
		}
		if ps.Credited && (ps.ConcurrencyWithoutSharing == nil || *ps.ConcurrencyWithoutSharing != before) {
			t.Errorf("%d prefixes: unshared figure %v, want %.3f", tc.prefixes, ps.ConcurrencyWithoutSharing, before)
		}
	}
}

// TestHeldTokens: the KV check's observed figure counts a credited prefix once.
func TestHeldTokens(t *testing.T) {
	ps := &PrefixSharing{Credited: true, CountedTokens: 2000, Prefixes: 1}
	for _, tc := range []struct {
		c    *Capacity
		want float64
	}{
		{nil, 10 * (2100 + 50)},
		{&Capacity{PrefixSharing: &PrefixSharing{CountedTokens: 2000, Prefixes: 1}}, 10 * (2100 + 50)}, // not credited
		{&Capacity{PrefixSharing: ps}, 10*(100+50) + 2000},
	} {
		if got := heldTokens(tc.c, 10, 2100, 100); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
}
