package workload

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// Blocks is the prompt of a replayed request whose prompt is a chain of hashed
// token blocks (a Mooncake trace's hash_ids, blockTokens each; the last one holds
// the rest of target): each block is a deterministic run of words drawn from the
// seed, the pass and its hash id alone, so two requests that share a hash id send
// the same text for that block and a server's prefix cache sees the same shared
// prefix as the production system did, while blocks of different ids differ.
// pass separates the replays of one run (each speed's level is one pass): a level
// must not find the blocks of the level before it in the cache.
//
// A block is round(blockTokens / tokens per word) words (calibrated), the last
// block fewer; a shorter last block is a prefix of the same id's full block.
func (w *Workload) Blocks(pass uint64, hashIDs []int64, blockTokens, target int) client.Prompt {
	perWord := w.b
	if !(perWord > 0) {
		perWord = 1
	}
	full := max(1, int(math.Round(float64(blockTokens)/perWord)))
	last := max(1, int(math.Round(float64(target-(len(hashIDs)-1)*blockTokens)/perWord)))
	var b strings.Builder
	for i, id := range hashIDs {
		n := full
		if i == len(hashIDs)-1 {
			n = min(last, full)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		blockText(&b, w.seed^pass*0x9e3779b97f4a7c15, id, n)
	}
	return client.Prompt{Text: b.String(), TargetTokens: target}
}

// blockText appends the first n words of block id.
func blockText(b *strings.Builder, seed uint64, id int64, n int) {
	rng := rand.New(rand.NewPCG(seed, uint64(id)^0x5bd1e9955bd1e995))
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
}
