package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/trace"
)

// A run recorded with a target prefix-hit rate (record --prefix-hit-rate) flushed
// the server's prefix cache and primed its prefix groups before each level. Each
// level's achieved rate is read from the server: vLLM's prefix_cache_hits over
// prefix_cache_queries in the level's window, else the cached_tokens its answers
// reported over their prompt tokens, else SGLang's cache_hit_rate gauge; a level
// that misses the target by more than prefixHitMargin is flagged.

// prefixHitMargin is how far a level's achieved hit rate may stray from the target
// before it is flagged: 10 percentage points.
const prefixHitMargin = 0.10

// achievedHit is a level's achieved hit rate and where it comes from.
func achievedHit(l Level) (*float64, string) {
	s := l.Server
	counters := s != nil && s.PrefixHitRate != nil && s.Engine != engine.SGLang
	switch {
	case counters:
		return s.PrefixHitRate, "server counters"
	case l.Workload != nil && l.Workload.PrefixHitShare != nil:
		return l.Workload.PrefixHitShare, "usage cached_tokens"
	case s != nil && s.PrefixHitRate != nil:
		return s.PrefixHitRate, "server gauge"
	}
	return nil, ""
}

// checkPrefixHits fills each level's PrefixHit against the plan's target and
// returns a warning per level that missed it.
func checkPrefixHits(r *Run, plan trace.Plan, meta []levelMeta) []string {
	target := plan.PrefixHitRate
	if !(target > 0) {
		return nil
	}
	prepared := map[int]string{}
	for _, m := range meta {
		prepared[m.Level] = m.PrefixCache
	}
	var out []string
	for i := range r.Levels {
		l := &r.Levels[i]
		c := &PrefixHitCheck{Target: target, Margin: prefixHitMargin, Prepared: prepared[l.Level]}
		c.Achieved, c.Source = achievedHit(*l)
		switch {
		case c.Achieved == nil:
			out = append(out, fmt.Sprintf("%s: the target prefix-hit rate %.0f%% cannot be checked: the server reported no prefix-cache hits (no counters, no cached_tokens)", levelName(*l), 100*target))
		case math.Abs(*c.Achieved-target) > prefixHitMargin:
			c.Missed = true
			out = append(out, fmt.Sprintf("%s: prefix-cache hit rate %.1f%% (%s) misses the target %.0f%% by more than %.0f points%s",
				levelName(*l), 100**c.Achieved, c.Source, 100*target, 100*prefixHitMargin, preparedNote(c.Prepared)))
		}
		l.PrefixHit = c
	}
	return out
}

// preparedNote is how the cache was prepared, for a missed level's warning.
func preparedNote(p string) string {
	if p == "" {
		return ""
	}
	return " (before it: " + p + ")"
}
