package record

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/internal/sse"
	"github.com/ceiling-llm/ceiling/trace"
)

// Item 5: a usage count far above max_tokens, or out of range, is not stored; the
// row counts chunks instead and the recorder is told why.
func TestFillRowUsageNotBelieved(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	tests := []struct {
		name     string
		usage    *sse.Usage
		want     int32
		source   string
		warnWord string // "" = no warning
	}{
		{"honest", &sse.Usage{CompletionTokens: n(16)}, 16, "usage", ""},
		{"a few special tokens over", &sse.Usage{CompletionTokens: n(20)}, 20, "usage", ""},
		{"far above max_tokens", &sse.Usage{CompletionTokens: n(1_000_000)}, 7, "chunks", "far above max_tokens 16"},
		{"out of range", &sse.Usage{Invalid: []string{"completion_tokens -70000000000"}}, 7, "chunks", "completion_tokens -7"},
	}
	for _, tt := range tests {
		row := trace.Row{MaxTokens: 16}
		warn := fillRow(&row, &client.Result{ContentChunks: 7, Usage: tt.usage, Finish: "length"})
		if row.OutputTokens == nil || *row.OutputTokens != tt.want || row.TokensSource != tt.source {
			t.Errorf("%s: output %v (%s), want %d (%s)", tt.name, row.OutputTokens, row.TokensSource, tt.want, tt.source)
		}
		if (warn == "") != (tt.warnWord == "") || !strings.Contains(warn, tt.warnWord) {
			t.Errorf("%s: warning %q, want one saying %q", tt.name, warn, tt.warnWord)
		}
	}
}
