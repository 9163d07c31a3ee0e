package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// replayPrefixEvidence adds to the verdict's evidence, for a replayed trace whose
// requests name their prompt blocks (a Mooncake trace's hash_ids, the run info's
// replay_prefix), the share of its blocks that repeat leading blocks an earlier
// request sent (what a prefix cache that kept every block would serve) beside the
// share of prompt tokens each level's server served from its prefix cache (the
// rows' cached tokens): a cache that holds the trace's prefixes comes near the
// first, one too small for them falls below it.
func replayPrefixEvidence(r *Run, rp *trace.ReplayPrefix) {
	if rp == nil || rp.Blocks == 0 {
		return
	}
	shared := 0
	for _, s := range rp.SharedPrefixBlocks {
		shared += int(s)
	}
	text := fmt.Sprintf("the replayed %s trace repeats %.0f%% of its prompt blocks (%d of %d blocks of %d tokens, %d prefix groups) as leading blocks an earlier request sent: what a prefix cache that kept every block would serve",
		rp.Format, 100*float64(shared)/float64(rp.Blocks), shared, rp.Blocks, rp.BlockTokens, rp.PrefixGroups)
	var per []string
	for _, l := range r.Levels {
		if w := l.Workload; w != nil && w.PrefixHitShare != nil {
			per = append(per, fmt.Sprintf("%s %.0f%%", offeredLabel(l), 100**w.PrefixHitShare))
		}
	}
	if len(per) > 0 {
		text += "; the server served from its prefix cache (cached prompt tokens): " + strings.Join(per, ", ")
	}
	r.Ceiling.Evidence = append(r.Ceiling.Evidence, text)
}
