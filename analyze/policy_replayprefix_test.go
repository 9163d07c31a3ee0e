package analyze

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// TestReplayPrefixEvidence: a replay whose run info records its shared blocks
// gets a verdict line with the share of blocks an earlier request sent, beside
// each level's prefix-cache share; a run without replay_prefix gets none.
func TestReplayPrefixEvidence(t *testing.T) {
	rp := &trace.ReplayPrefix{Format: "mooncake", BlockTokens: 512, Requests: 7, Blocks: 18, UniqueBlocks: 11, SharedBlockRefs: 7, PrefixGroups: 3,
		Group: []int32{0, 0, 2, 0, 2, 5, 0}, SharedPrefixBlocks: []int32{0, 1, 0, 2, 1, 0, 3}}
	r := &Run{Levels: []Level{{Level: 0, Rate: 11.7, Workload: &Workload{PrefixHitShare: ptr(0.31)}}, {Level: 1, Rate: 23.3}}}
	replayPrefixEvidence(r, rp)
	want := "the replayed mooncake trace repeats 39% of its prompt blocks (7 of 18 blocks of 512 tokens, 3 prefix groups) as leading blocks an earlier request sent: what a prefix cache that kept every block would serve; the server served from its prefix cache (cached prompt tokens): 11.7/s 31%"
	if ev := strings.Join(r.Ceiling.Evidence, "\n"); ev != want {
		t.Errorf("evidence\n%q\nwant\n%q", ev, want)
	}
	plain := &Run{}
	replayPrefixEvidence(plain, nil)
	if len(plain.Ceiling.Evidence) != 0 {
		t.Errorf("a run without replay_prefix got %q", plain.Ceiling.Evidence)
	}
}
