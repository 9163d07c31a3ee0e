package record

import (
	"math"

	"github.com/ceiling-llm/ceiling/levelrule"
	"github.com/ceiling-llm/ceiling/searchrule"
)

// The criteria of the ceiling search, and how a level is judged on them, are
// package searchrule's: a level is judged on the analysis's own figures for it
// (Options.Analyzer computes them), so the search's answer and the analysis agree.

// DefaultCriteria are the criteria of a search given none: at most 5% of the
// requests fail, and the server shows no sign of a full KV cache.
func DefaultCriteria() []searchrule.Criterion {
	return []searchrule.Criterion{{Kind: "errors", Limit: 0.05}, {Kind: "kv"}}
}

// tailNeed is the most requests a latency criterion's percentile needs in one
// level (p95: 20, p99: 100; searchrule.TailNeed), with the level rule's margin: the
// search sizes its levels to it instead of re-running them longer.
func (o *Options) tailNeed() int {
	n := 0
	for _, c := range o.Criteria {
		if c.Kind == "latency" {
			n = max(n, searchrule.TailNeed(c.P))
		}
	}
	return int(math.Ceil(levelrule.Margin * float64(n)))
}
