package enginetest

import "container/heap"

// SGLang's radix cache (python/sglang/srt/mem_cache/radix_cache.py), page size 1
// (the default): a radix tree over token ids whose nodes hold the KV of their
// tokens.
//
//   - match_prefix walks the tree token by token and splits a node where a match
//     ends inside it (_split_node); a request's match is capped at its length − 1
//     (Req.init_next_round_input: the last token is computed for its logits).
//   - A running request locks the path of its node (inc_lock_ref): locked tokens
//     are protected, the others evictable. The scheduler counts available +
//     evictable tokens as free (PrefillAdder's rem_total_tokens).
//   - After its prefill a request's prompt is inserted and its lock moves to the
//     new node (cache_unfinished_req); when it finishes, its tokens but the last
//     are inserted and its lock released (cache_finished_req). Tokens it computed
//     that the tree already held are freed.
//   - evict frees unlocked leaves, least recently used first (a heap on
//     last_access_time), a parent becoming an unlocked leaf joining them, when an
//     allocation needs the space.
//   - flush_cache (POST /flush_cache, http_server.py; Scheduler.flush_cache)
//     resets the tree only when no request runs or waits, else refuses: HTTP 400.
//   - The gauge sglang:cache_hit_rate is the last prefill batch's hit tokens over
//     its hit + new tokens (Scheduler.log_prefill_stats).

// radixNode is a node of the tree: the tokens of its edge, its children by their
// first token, and its lock count.
type radixNode struct {
	key      []uint32
	children map[uint32]*radixNode
	parent   *radixNode
	lock     int
	access   int64
}

// radixTree is the cache: total tokens held, locked (protected) tokens.
type radixTree struct {
	root          *radixNode
	total, locked int
	clock         int64
}

func newRadixTree() *radixTree {
	return &radixTree{root: &radixNode{children: map[uint32]*radixNode{}, lock: 1}}
}

func (t *radixTree) tick() int64 { t.clock++; return t.clock }

// split cuts n after its first k tokens: the new node takes the head and n's
// place under its parent.
func (t *radixTree) split(n *radixNode, k int) *radixNode {
	head := &radixNode{key: n.key[:k:k], children: map[uint32]*radixNode{}, parent: n.parent, lock: n.lock, access: n.access}
	n.parent.children[head.key[0]] = head
	n.key = n.key[k:]
	n.parent = head
	head.children[n.key[0]] = n
	return head
}

// match is the node ending the longest cached prefix of ids, and its length.
func (t *radixTree) match(ids []uint32) (*radixNode, int) {
	now := t.tick()
	n, matched := t.root, 0
	for matched < len(ids) {
		c, ok := n.children[ids[matched]]
		if !ok {
			break
		}
		k := 0
		for k < len(c.key) && matched+k < len(ids) && c.key[k] == ids[matched+k] {
			k++
		}
		if k < len(c.key) {
			c = t.split(c, k)
		}
		c.access = now
		n, matched = c, matched+k
	}
	return n, matched
}

// insert adds ids to the tree; it returns the node of the whole key and how many
// of its tokens the tree held already.
func (t *radixTree) insert(ids []uint32) (*radixNode, int) {
	n, present := t.match(ids)
	if present < len(ids) {
		leaf := &radixNode{key: append([]uint32(nil), ids[present:]...), children: map[uint32]*radixNode{}, parent: n, access: t.tick()}
		n.children[leaf.key[0]] = leaf
		t.total += len(leaf.key)
		n = leaf
	}
	return n, present
}

// unlocked is how many tokens on n's path locking it would protect.
func (t *radixTree) unlocked(n *radixNode) int {
	k := 0
	for ; n != t.root; n = n.parent {
		if n.lock == 0 {
			k += len(n.key)
		}
	}
	return k
}

// lockPath adds d (±1) to the lock of n's path (inc_lock_ref, dec_lock_ref).
func (t *radixTree) lockPath(n *radixNode, d int) {
	for ; n != nil && n != t.root; n = n.parent {
		if n.lock == 0 && d > 0 {
			t.locked += len(n.key)
		}
		n.lock += d
		if n.lock == 0 && d < 0 {
			t.locked -= len(n.key)
		}
	}
}

// evict frees at least k unlocked tokens, least recently used leaves first; it
// returns the tokens freed.
func (t *radixTree) evict(k int) int {
	var leaves leafHeap
	var walk func(n *radixNode)
	walk = func(n *radixNode) {
		for _, c := range n.children {
			walk(c)
		}
		if n != t.root && len(n.children) == 0 && n.lock == 0 {
			leaves = append(leaves, n)
		}
	}
	walk(t.root)
	heap.Init(&leaves)
	freed := 0
	for freed < k && leaves.Len() > 0 {
		n := heap.Pop(&leaves).(*radixNode)
		freed += len(n.key)
		t.total -= len(n.key)
		p := n.parent
		delete(p.children, n.key[0])
		if p != t.root && len(p.children) == 0 && p.lock == 0 {
			heap.Push(&leaves, p)
		}
	}
	return freed
}

// reset empties the tree (RadixCache.reset).
func (t *radixTree) reset() {
	t.root = &radixNode{children: map[uint32]*radixNode{}, lock: 1}
	t.total, t.locked = 0, 0
}

// leafHeap orders leaves by last access, oldest first.
type leafHeap []*radixNode

func (h leafHeap) Len() int           { return len(h) }
func (h leafHeap) Less(i, j int) bool { return h[i].access < h[j].access }
func (h leafHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *leafHeap) Push(x any)        { *h = append(*h, x.(*radixNode)) }
func (h *leafHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}
