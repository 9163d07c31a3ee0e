package record

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// TestKVDeclared: one declared figure is the search's bound and is said as
// declared; llama.cpp's range bounds the search by its upper end (a cache per
// slot), so a unified cache never caps the search below what the server holds, and
// is said as a range naming both layouts, never as a figure the server declared.
func TestKVDeclared(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	tests := []struct {
		name  string
		s     trace.ServerInfo
		bound int64
		says  []string
		not   string
	}{
		{"vLLM", trace.ServerInfo{Kind: "vllm", KVCapacityTokens: p(351424)}, 351424, []string{"351,424 tokens, as it declares"}, "at most"},
		{"llama.cpp 8 slots", trace.ServerInfo{Kind: "llamacpp", Slots: p(8), NCtx: p(2048), KVLayout: "unknown", KVCapacityMinTokens: p(2048), KVCapacityMaxTokens: p(16384)},
			16384, []string{"at most 16,384 tokens", "8 slots of 2,048", "one cache of 2,048 shared"}, "as it declares"},
		{"nothing", trace.ServerInfo{Kind: "unknown"}, 0, nil, "tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kvCapacityBound(tt.s); got != tt.bound {
				t.Errorf("bound %d, want %d", got, tt.bound)
			}
			said := kvDeclared(tt.s)
			for _, w := range tt.says {
				if !strings.Contains(said, w) {
					t.Errorf("%q does not say %q", said, w)
				}
			}
			if tt.not != "" && strings.Contains(said, tt.not) {
				t.Errorf("%q says %q", said, tt.not)
			}
		})
	}
}
