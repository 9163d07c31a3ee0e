package probe

import (
	"fmt"
	"math/bits"
)

// Server-declared figures drive the KV ceiling, the verdict and --concurrency
// auto's search, so each is range-checked before it is kept: one outside what any
// server runs is refused with a note naming the server field, and never used (a
// num_gpu_blocks × block_size that overflowed int64 read "KV cache: 4 tokens",
// capped the search at 1 and bound the ceiling by kv at 0.1).
const (
	// maxDeclaredTokens bounds a token count a server declares (KV capacity,
	// context length): 2^36 is 68 billion tokens, a thousand times the largest KV
	// pool of a node.
	maxDeclaredTokens = 1 << 36
	// maxDeclaredBlocks bounds vLLM's num_gpu_blocks; maxBlockSize its block_size
	// (vLLM uses 1 to 256 tokens a block).
	maxDeclaredBlocks = 1 << 32
	maxBlockSize      = 1 << 16
	// maxDeclaredSlots bounds the requests a server says it runs at once.
	maxDeclaredSlots = 1 << 20
)

// inRange keeps v when it lies in 1..hi; otherwise it adds a note naming field and
// returns nil.
func (p *Probe) inRange(field string, v *int64, hi int64) *int64 {
	if v == nil || (*v >= 1 && *v <= hi) {
		return v
	}
	p.Notes = append(p.Notes, fmt.Sprintf("the server declared %s = %d, outside 1..%d: not used", field, *v, hi))
	return nil
}

// product is a × b when both are known and the product is in 1..hi; otherwise
// nil, with a note naming the fields when the product is out of range.
func (p *Probe) product(fa string, a *int64, fb string, b *int64, hi int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	hiProd, lo := bits.Mul64(uint64(*a), uint64(*b))
	if *a < 1 || *b < 1 || hiProd != 0 || lo > uint64(hi) {
		p.Notes = append(p.Notes, fmt.Sprintf("the server declared %s = %d and %s = %d, whose product is outside 1..%d tokens: not used", fa, *a, fb, *b, int64(hi)))
		return nil
	}
	v := int64(lo)
	return &v
}
