package record

import (
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/trace"
)

// fillRow copies what a request measured into its trace row; the request path fills
// the run and level fields.
func fillRow(row *trace.Row, r *client.Result) {
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
	if u := r.Usage; u != nil {
		row.PromptTokens = u.PromptTokens
		row.CachedTokens = u.CachedTokens
		row.ReasoningTokens = u.ReasoningTokens
		if u.CompletionTokens != nil {
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
}

func ptr[T any](v T) *T { return &v }
