package capacity

import (
	"math"
	"testing"
)

// TestSharedConcurrency: 2,000 shared + 200 own tokens in a cache of 8,000 tokens
// hold 30 requests; full blocks only; prefixes that fill the cache share nothing.
func TestSharedConcurrency(t *testing.T) {
	at := func(tokens float64) float64 { return 8000 / tokens }
	for _, tc := range []struct {
		name   string
		s      SharedPrefix
		want   float64
		shared bool
	}{
		{"one prefix", SharedPrefix{Tokens: 2000, Prefixes: 1, BlockTokens: 16}, 30, true},
		{"full blocks only", SharedPrefix{Tokens: 2010, Prefixes: 1, BlockTokens: 16}, 30, true},
		{"token-granular", SharedPrefix{Tokens: 2100, Prefixes: 1, BlockTokens: 1}, (8000 - 2100) / 100.0, true},
		{"two prefixes", SharedPrefix{Tokens: 2000, Prefixes: 2, BlockTokens: 16}, 20, true},
		{"prefixes fill the cache", SharedPrefix{Tokens: 2000, Prefixes: 4, BlockTokens: 16}, 0, false},
		{"less than a block", SharedPrefix{Tokens: 10, Prefixes: 1, BlockTokens: 16}, 0, false},
	} {
		got, ok := SharedConcurrency(at, 8000, 2200, tc.s)
		if ok != tc.shared || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %.3f, %v; want %.3f, %v", tc.name, got, ok, tc.want, tc.shared)
		}
	}
}
