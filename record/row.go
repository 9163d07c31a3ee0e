package record

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// fillRow copies what a request measured into its trace row; the request path fills
// the run and level fields (MaxTokens before calling it). It returns a warning when
// the server's usage was not believed: a count out of range (negative, fractional,
// beyond int32) is stored as null, and an output count far above max_tokens, which
// no server that honours max_tokens can send, is replaced by the counted chunks.
func fillRow(row *trace.Row, r *client.Result) (warning string) {
	row.SentNs = r.SentNs
	if r.FirstTokenNs != 0 {
		row.FirstTokenNs = ptr(r.FirstTokenNs)
	}
	if r.FirstContentNs != 0 {
		row.FirstContentNs = ptr(r.FirstContentNs)
	}
	row.EndNs = r.EndNs
	row.ChunkGapsUs = r.GapsUs
	if row.ChunkGapsUs == nil {
		row.ChunkGapsUs = []int32{}
	}
	row.Status = int32(r.Status)
	if r.Finish != "" {
		row.FinishReason = ptr(r.Finish)
	}
	if r.Err != "" {
		row.Error = ptr(r.Err)
	}
	row.TokensSource = "chunks"
	chunks := int32(r.ContentChunks + r.ReasoningChunk)
	var bad []string
	if u := r.Usage; u != nil {
		bad = u.Invalid
		row.PromptTokens = u.PromptTokens
		row.CachedTokens = u.CachedTokens
		row.ReasoningTokens = u.ReasoningTokens
		if c := u.CompletionTokens; c != nil && row.MaxTokens > 0 && int64(*c) > farAbove(row.MaxTokens) {
			bad = append(bad, fmt.Sprintf("completion_tokens %d far above max_tokens %d", *c, row.MaxTokens))
		} else if c != nil {
			row.OutputTokens = u.CompletionTokens
			row.TokensSource = "usage"
		}
	}
	if row.TokensSource == "chunks" && (chunks > 0 || r.Err == "") {
		row.OutputTokens = ptr(chunks)
	}
	if row.ReasoningTokens == nil && r.ReasoningChunk > 0 {
		row.ReasoningTokens = ptr(int32(r.ReasoningChunk))
	}
	if len(bad) == 0 {
		return ""
	}
	return "usage not believed (" + strings.Join(bad, ", ") + "): stored as null, output tokens counted from chunks"
}

// farAbove is the output count beyond which a usage report for max_tokens is not
// believed: twice the limit, and at least 64 tokens over it (some servers count a
// few special tokens beyond it).
func farAbove(maxTokens int32) int64 {
	return max(2*int64(maxTokens), int64(maxTokens)+64)
}

func ptr[T any](v T) *T { return &v }
