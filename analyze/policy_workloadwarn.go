package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/ceiling-llm/ceiling/trace"
)

// Two warnings about the workload a run's levels actually sent, from the per-level
// lengths and prefix-cache hits of workloadPass:
//
//   - a warm prefix cache: prompts meant to be unique (ceiling's synthetic prompts
//     with no shared prefix and single turns) of which the server served a large
//     share from its prefix cache: the same prompts were sent before (a repeated
//     --seed against a server that kept its cache), so the level's TTFT and
//     throughput are flattered;
//   - levels that did not share one workload: a level's mean realised prompt or
//     output length differs from the run's beyond sampling noise, so its point on
//     the curve mixes concurrency with workload.

const (
	// maxUniquePrefixHit is the prefix-hit share above which unique prompts are
	// called cached: a chat template and the prompt's "request NNNNNNNN" lead are a
	// few percent of a prompt.
	maxUniquePrefixHit = 0.3
	// lengthNoiseZ is how many standard errors a level's mean length may stray from
	// the run's before it is beyond noise; lengthMinShift the relative difference
	// below which it does not matter whatever the noise.
	lengthNoiseZ   = 4.0
	lengthMinShift = 0.05
)

// uniquePrompts reports whether a run recorded by ceiling with this plan meant its
// prompts to be unique (after a shared prefix, if any).
func uniquePrompts(p trace.Plan) bool {
	return p.Mode != "" && p.Dataset == "" && p.Replay == "" && p.Turns <= 1
}

// prefixCacheWarnings names each level whose unique prompts hit the prefix cache:
// more than maxUniquePrefixHit beyond the shared prefix's share of the prompt.
func prefixCacheWarnings(levels []Level, p trace.Plan, recorded bool) []string {
	if !recorded || !uniquePrompts(p) {
		return nil
	}
	var out []string
	for _, l := range levels {
		w := l.Workload
		if w == nil || w.PrefixHitShare == nil {
			continue
		}
		expected := 0.0
		if p.SharedPrefixTokens > 0 && w.Prompt.Mean != nil && *w.Prompt.Mean > 0 {
			expected = min(1, float64(p.SharedPrefixTokens) / *w.Prompt.Mean)
		}
		if *w.PrefixHitShare <= expected+maxUniquePrefixHit {
			continue
		}
		out = append(out, fmt.Sprintf("%s: the server served %.1f%% of the prompt tokens from its prefix cache, though the prompts were meant to be unique beyond their shared prefix: the same prompts were sent to it before (a repeated --seed, seed %d, against a server that kept its cache), so TTFT and throughput are flattered; record again without --seed (each run then draws a fresh seed) or restart the server",
			levelName(l), 100**w.PrefixHitShare, p.Seed))
	}
	return out
}

// lengthStats is one level's realised lengths: count, mean and variance.
type lengthStats struct {
	n         int
	mean, v   float64
	hasLength bool
}

// lengthShiftWarnings compares each level's mean realised prompt and output length
// with the median of the levels' means (robust to the one level that strays), in
// standard errors of the difference, from the median of the levels' variances.
func (p *workloadPass) lengthShiftWarnings(r *Run) []string {
	if len(r.Levels) < 2 {
		return nil
	}
	var out []string
	for _, kind := range []string{"prompt", "output"} {
		per := make([]lengthStats, len(r.Levels))
		var means, vars []float64
		for i, l := range r.Levels {
			a := p.levels[r.RunID][int32(l.Level)]
			if a == nil {
				continue
			}
			v := &a.prompt
			if kind == "output" {
				v = &a.output
			}
			per[i] = v.stats()
			if per[i].n >= 2 {
				means = append(means, per[i].mean)
				vars = append(vars, per[i].v)
			}
		}
		if len(means) < 2 {
			continue
		}
		slices.Sort(means)
		slices.Sort(vars)
		ref, refVar := median(means), median(vars)
		if ref <= 0 {
			continue
		}
		for i, l := range r.Levels {
			s := per[i]
			if s.n < 2 {
				continue
			}
			se := math.Sqrt(2 * refVar / float64(s.n))
			shift := math.Abs(s.mean - ref)
			if shift <= lengthMinShift*ref || shift <= lengthNoiseZ*se {
				continue
			}
			why := "no spread within levels"
			if se > 0 {
				why = fmt.Sprintf("%.1f standard errors", shift/se)
			}
			out = append(out, fmt.Sprintf("%s: mean %s length %.0f tokens against %.0f for the run's levels (median; %s): the levels did not send one workload, so this point mixes concurrency with workload",
				levelName(l), kind, s.mean, ref, why))
		}
	}
	return out
}
