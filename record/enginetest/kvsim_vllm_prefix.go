package enginetest

import "container/list"

// vLLM v1's automatic prefix caching, as its block pool does it
// (vllm/v1/core/block_pool.py, kv_cache_utils.py, kv_cache_manager.py):
//
//   - Only full blocks are cached. A block's hash chains its parent's hash with the
//     block's tokens (hash_block_tokens(parent_block_hash, block_tokens)), so a
//     block is found only behind the very same prefix.
//   - A block holds a reference count: the requests using it. Shared prefix blocks
//     are held once, however many running requests use them.
//   - A block whose count falls to 0 goes to the tail of the free queue
//     (FreeKVCacheBlockQueue) and keeps its hash: it is still a cache hit until it
//     is evicted. A request frees its blocks in reverse order, so that its last
//     blocks are evicted first. Allocation pops the head of the free queue and, if
//     that block was cached, evicts it (_maybe_evict_cached_block): cached blocks
//     live as long as no one needs the space.
//   - A hit removes the block from the free queue (touch) and raises its count.
//     get_computed_blocks caps the hit at num_tokens − 1 (the last token is always
//     computed, for its logits), so a full hit of a block-aligned prompt recomputes
//     its last block.
//   - Hashes are registered when blocks are allocated for tokens to compute
//     (allocate_slots → cache_blocks), so a second request with the same prefix
//     scheduled in the same step already hits.
//   - The usage gauge counts blocks in use (1 − free/total: cached free blocks are
//     free). The counters vllm:prefix_cache_queries and vllm:prefix_cache_hits
//     (v1/metrics/loggers.py) add, for each request looked up when scheduled from
//     the waiting queue, its num_tokens and its hit tokens; since PrefixCacheStats
//     counts resumed preempted requests apart, the counters hold first lookups only.
//   - POST /reset_prefix_cache (entrypoints/serve/cache/api_router.py) answers 200
//     whatever happens; BlockPool.reset_prefix_cache refuses (logs a warning and
//     returns False) while any block is in use.

// blockPool is vLLM's pool of KV blocks with prefix caching.
type blockPool struct {
	ref           []int
	hash          []uint64             // chained hash of a full cached block; 0 = none
	elem          []*list.Element      // position in the free queue (nil while in use)
	free          list.List            // of int: blocks with ref 0, head evicted first
	cached        map[uint64]int       // hash → block
	used          int                  // blocks with ref > 0
	tables        map[*simReq][]int    // each request's block table
	hashes        map[*simReq][]uint64 // each request's full-block hashes so far
	queries, hits int64                // the prefix-cache counters
}

func newBlockPool(blocks int) *blockPool {
	p := &blockPool{ref: make([]int, blocks), hash: make([]uint64, blocks), elem: make([]*list.Element, blocks),
		cached: map[uint64]int{}, tables: map[*simReq][]int{}, hashes: map[*simReq][]uint64{}}
	for b := range blocks {
		p.elem[b] = p.free.PushBack(b)
	}
	return p
}

// numFree is the blocks with no user: empty or cached (get_num_free_blocks).
func (p *blockPool) numFree() int { return p.free.Len() }

// blockHashes is the chained hash of each full block of r's tokens (prompt and
// generated so far), up to n tokens.
func blockHashes(r *simReq, n int) []uint64 {
	var out []uint64
	parent := uint64(0x9e3779b97f4a7c15)
	for start := 0; start+blockSize <= n; start += blockSize {
		h := parent
		for i := start; i < start+blockSize; i++ {
			h = mixToken(h, r.tokenID(i))
		}
		if h == 0 {
			h = 1 // 0 marks "no hash"
		}
		out = append(out, h)
		parent = h
	}
	return out
}

// mixToken folds one token id into a running hash (FNV-1a over the id's bytes).
func mixToken(h uint64, id uint32) uint64 {
	for range 4 {
		h ^= uint64(id & 0xff)
		h *= 1099511628211
		id >>= 8
	}
	return h
}

// lookup is the longest run of cached blocks that starts r's tokens, capped at
// num_tokens − 1 tokens (KVCacheManager.get_computed_blocks).
func (p *blockPool) lookup(r *simReq) []int {
	n := r.prompt + r.generated
	var hit []int
	for _, h := range blockHashes(r, n-1) {
		b, ok := p.cached[h]
		if !ok {
			break
		}
		hit = append(hit, b)
	}
	return hit
}

// evictable counts the blocks among hit that a touch takes off the free queue.
func (p *blockPool) evictable(hit []int) int {
	n := 0
	for _, b := range hit {
		if p.ref[b] == 0 {
			n++
		}
	}
	return n
}

// touch gives r the cached blocks hit as its first blocks.
func (p *blockPool) touch(r *simReq, hit []int) {
	for _, b := range hit {
		p.take(b)
	}
	p.tables[r] = append(p.tables[r], hit...)
	p.hashes[r] = blockHashes(r, len(hit)*blockSize)
}

// take raises b's count, taking it off the free queue when it was free.
func (p *blockPool) take(b int) {
	if p.ref[b] == 0 {
		p.free.Remove(p.elem[b])
		p.elem[b] = nil
		p.used++
	}
	p.ref[b]++
}

// allocate gives r n new blocks from the head of the free queue, evicting cached
// ones (the caller checked that n are free).
func (p *blockPool) allocate(r *simReq, n int) {
	for range n {
		e := p.free.Front()
		b := e.Value.(int)
		if h := p.hash[b]; h != 0 {
			if p.cached[h] == b {
				delete(p.cached, h)
			}
			p.hash[b] = 0
		}
		p.take(b)
		p.tables[r] = append(p.tables[r], b)
	}
}

// cacheFull registers the hashes of r's blocks that are full once its first n
// tokens are computed (BlockPool.cache_full_blocks).
func (p *blockPool) cacheFull(r *simReq, n int) {
	table := p.tables[r]
	have := p.hashes[r]
	full := min(n/blockSize, len(table))
	if full <= len(have) {
		return
	}
	all := blockHashes(r, full*blockSize)
	for i := len(have); i < full; i++ {
		b, h := table[i], all[i]
		p.hash[b] = h
		if _, ok := p.cached[h]; !ok {
			p.cached[h] = b
		}
	}
	p.hashes[r] = all
}

// release frees r's blocks in reverse order (KVCacheManager.free): its last
// blocks reach the free queue first and are evicted first.
func (p *blockPool) release(r *simReq) {
	table := p.tables[r]
	for i := len(table) - 1; i >= 0; i-- {
		b := table[i]
		p.ref[b]--
		if p.ref[b] == 0 {
			p.used--
			if p.hash[b] == 0 || p.cached[p.hash[b]] != b {
				p.hash[b] = 0
			}
			p.elem[b] = p.free.PushBack(b)
		}
	}
	delete(p.tables, r)
	delete(p.hashes, r)
}

// reset drops every cached hash, as BlockPool.reset_prefix_cache does, and
// refuses (false) while any block is in use.
func (p *blockPool) reset() bool {
	if p.used > 0 {
		return false
	}
	clear(p.cached)
	for b := range p.hash {
		p.hash[b] = 0
	}
	return true
}
