package analyze

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
)

// Every figure a server declared (in the trace's run info, as the recorder's probe
// stored it, or in its scraped metrics) is range-checked before it drives the
// capacity section, the KV check or the verdict: one outside what any server runs
// is left out with a warning naming the field. A num_gpu_blocks × block_size that
// had overflowed int64 read "KV cache: 4 tokens (declared)" and bound the
// realistic ceiling by kv at 0.1. The bounds are the recorder's
// (record/internal/probe/bounds.go).
const (
	maxDeclaredTokens = 1 << 36 // KV capacity, context length: 68 billion tokens
	maxDeclaredBlocks = 1 << 32 // vLLM num_gpu_blocks
	maxBlockSize      = 1 << 16 // vLLM block_size
	maxDeclaredSlots  = 1 << 20 // requests run at once
)

// checkServerFacts leaves out of f every figure outside its range, and
// num_gpu_blocks and block_size (and a KV capacity equal to their wrapped product)
// when their product is no cache's, returning a warning for each figure left out.
func checkServerFacts(f *serverFacts) []string {
	var ws []string
	keep := func(field string, v **int64, hi int64) {
		if *v != nil && (**v < 1 || **v > hi) {
			ws = append(ws, fmt.Sprintf("the run info's server.%s = %d is outside 1..%d: not used (the server declared a figure no server runs, or the file was altered)", field, **v, hi))
			*v = nil
		}
	}
	if f.NumGPUBlocks != nil && f.BlockSize != nil {
		hi, lo := bits.Mul64(uint64(*f.NumGPUBlocks), uint64(*f.BlockSize))
		if *f.NumGPUBlocks < 1 || *f.BlockSize < 1 || hi != 0 || lo > maxDeclaredTokens {
			ws = append(ws, fmt.Sprintf("the run info's server.num_gpu_blocks = %d × server.block_size = %d is outside 1..%d tokens: neither is used", *f.NumGPUBlocks, *f.BlockSize, int64(maxDeclaredTokens)))
			if f.KVCapacityTokens != nil && *f.KVCapacityTokens == *f.NumGPUBlocks**f.BlockSize {
				ws = append(ws, fmt.Sprintf("the run info's server.kv_capacity_tokens = %d is that product wrapped around int64: not used", *f.KVCapacityTokens))
				f.KVCapacityTokens = nil
			}
			f.NumGPUBlocks, f.BlockSize = nil, nil
		}
	}
	keep("num_gpu_blocks", &f.NumGPUBlocks, maxDeclaredBlocks)
	keep("block_size", &f.BlockSize, maxBlockSize)
	keep("kv_capacity_tokens", &f.KVCapacityTokens, maxDeclaredTokens)
	keep("max_model_len", &f.MaxModelLen, maxDeclaredTokens)
	keep("n_ctx", &f.NCtx, maxDeclaredTokens)
	keep("slots", &f.Slots, maxDeclaredSlots)
	return ws
}

// declaredInRange says whether a KV capacity (tokens) or a cap on running
// requests a server's metrics declare is one a server can have.
func declaredInRange(v float64, hi float64) bool {
	return !math.IsNaN(v) && v >= 1 && v <= hi
}

// refusedDeclared are the warnings for the figures the scrapes declared out of
// range, each once.
func refusedDeclared(snaps []timedSnapshot) []string {
	seen := map[string]bool{}
	for _, s := range snaps {
		for _, r := range s.refused {
			seen[r] = true
		}
	}
	ws := make([]string, 0, len(seen))
	for r := range seen {
		ws = append(ws, "server metrics: "+r+": not used (no server runs that)")
	}
	sort.Strings(ws)
	return ws
}
