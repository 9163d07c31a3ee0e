package capacity

import "math"

// Shared prefixes in the KV demand. An engine with prefix caching (vLLM's
// automatic prefix caching, SGLang's radix cache) holds a prompt prefix that its
// running requests share once per KV cache, in full blocks: a request then
// demands only its unshared tokens, and each cache holds one copy of each prefix.

// SharedPrefix is the prefix the requests of a workload share.
type SharedPrefix struct {
	Tokens      float64 // shared tokens at the start of each prompt
	Prefixes    int     // distinct shared prefixes (at least 1)
	BlockTokens int     // the cache's unit: only full blocks are shared (1: every token)
}

// DefaultPrefixBlock is vLLM's block size on GPUs, the unit a prefix is shared in
// when the engine is not known.
const DefaultPrefixBlock = 16

// Counted is the shared tokens the cache holds once: the full blocks of Tokens.
func (s SharedPrefix) Counted() float64 {
	b := float64(max(s.BlockTokens, 1))
	return math.Floor(s.Tokens/b) * b
}

// SharedConcurrency is the concurrency a KV cache holds at requests of tokens
// when each request's counted prefix is held once per prefix: at(t) is the
// concurrency at requests of t tokens with nothing shared, perCache the tokens one
// cache holds. ok is false when sharing gains nothing: no full block, or the
// prefixes take so much of the cache that fewer requests than prefixes fit.
func SharedConcurrency(at func(float64) float64, perCache float64, tokens float64, s SharedPrefix) (float64, bool) {
	counted := s.Counted()
	if counted <= 0 || perCache <= 0 || tokens <= counted {
		return 0, false
	}
	held := float64(max(s.Prefixes, 1)) * counted / perCache
	if held >= 1 {
		return 0, false
	}
	v := at(tokens-counted) * (1 - held)
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= at(tokens) {
		return 0, false
	}
	return v, true
}

// ConcurrencyShared is the concurrency p's caches hold at requests of tokens with
// s's prefixes held once per cache; without a prefix shared (ok false) it is
// p.Concurrency(tokens).
func (p *PlanResult) ConcurrencyShared(tokens float64, s SharedPrefix) (v float64, ok bool) {
	if v, ok := SharedConcurrency(p.Concurrency, float64(p.KVTokens), tokens, s); ok {
		return v, true
	}
	return p.Concurrency(tokens), false
}
