package record

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
	"github.com/ceiling-llm/ceiling/trace"
)

// What the server declared of its KV cache, for the search's limit and words.
//
// A server declares one figure (vLLM, SGLang, TGI, one llama.cpp slot) or, for
// llama.cpp with several slots, a range: n_ctx (the slots share one cache) ..
// slots × n_ctx (a cache per slot), which its endpoints cannot tell apart
// (probe.llamaKV). The search's limit must never stop below what the server holds,
// so it takes the upper bound; the lower bound is only ever named beside it.

// kvCapacityBound is the most KV tokens the server declared it holds (0: unknown).
func kvCapacityBound(s trace.ServerInfo) int64 {
	switch {
	case s.KVCapacityTokens != nil && *s.KVCapacityTokens > 0:
		return *s.KVCapacityTokens
	case s.KVCapacityMaxTokens != nil && *s.KVCapacityMaxTokens > 0:
		return *s.KVCapacityMaxTokens
	}
	return 0
}

// kvDeclared says what the server declared of its KV cache, e.g. "16,384 tokens, as
// it declares" or "at most 16,384 tokens: 8 slots of 2,048, each its own cache,
// or one cache of 2,048 shared by the slots (the server does not say which)".
// Empty when it declared nothing.
func kvDeclared(s trace.ServerInfo) string {
	switch {
	case s.KVCapacityTokens != nil && *s.KVCapacityTokens > 0:
		return numfmt.Int(*s.KVCapacityTokens) + " tokens, as it declares"
	case s.KVCapacityMaxTokens != nil && *s.KVCapacityMaxTokens > 0 && s.KVCapacityMinTokens != nil && s.Slots != nil:
		return fmt.Sprintf("at most %s tokens: %d slots of %s, each its own cache, or one cache of %s shared by the slots (the server does not say which)",
			numfmt.Int(*s.KVCapacityMaxTokens), *s.Slots, numfmt.Int(*s.KVCapacityMinTokens), numfmt.Int(*s.KVCapacityMinTokens))
	case s.KVCapacityMaxTokens != nil && *s.KVCapacityMaxTokens > 0:
		return "at most " + numfmt.Int(*s.KVCapacityMaxTokens) + " tokens"
	}
	return ""
}
