package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/trace"
)

// Prefix-aware KV demand: an engine that caches prefixes (vLLM's automatic prefix
// caching, SGLang's radix cache) holds a prefix its running requests share once,
// in full blocks. A request's KV demand is then its unshared tokens, and each
// cache holds one copy of each shared prefix. Dividing the capacity by the whole
// request length, as for unique prompts, predicts a fraction of the requests the
// cache holds: for 2,000 shared + 100 + 100 tokens about a tenth.

// prefixWorkload is what a run's own plan says of its prompts' shared prefixes.
type prefixWorkload struct {
	SharedTokens int
	Prefixes     int
	Turns        int
	Known        bool // the plan describes the prompts (a run of ceiling's own)
}

// planPrefix reads the shared prefixes of a plan recorded by ceiling itself.
func planPrefix(p trace.Plan, recorded bool) prefixWorkload {
	if !recorded {
		return prefixWorkload{}
	}
	return prefixWorkload{SharedTokens: p.SharedPrefixTokens, Prefixes: max(p.Prefixes, 1), Turns: p.Turns, Known: p.Dataset == "" && p.Replay == ""}
}

// serverShared is the prompt tokens per request the server reported as cached,
// over the levels that report them (0: none).
func serverShared(levels []Level) float64 {
	var sum float64
	var n int
	for _, l := range levels {
		w := l.Workload
		if w == nil || w.PrefixHitShare == nil || w.Prompt.Mean == nil || w.CachedRequests == 0 {
			continue
		}
		sum += *w.PrefixHitShare * *w.Prompt.Mean * float64(w.CachedRequests)
		n += w.CachedRequests
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// prefixDemand decides how the run's shared prefixes count: where they come
// from, whether the engine shares them across requests, and in what blocks. It
// returns nil when the prompts share nothing.
func prefixDemand(facts serverFacts, work workloadTokens, levels []Level) *PrefixSharing {
	var ps PrefixSharing
	switch {
	case work.Prefix.SharedTokens > 0:
		ps = PrefixSharing{Source: "workload", SharedTokens: float64(work.Prefix.SharedTokens), Prefixes: work.Prefix.Prefixes}
	case work.Prefix.Known:
		// The run's own unique prompts (multi-turn history included: one turn of a
		// conversation runs at a time, so running requests share none of it).
		return nil
	default:
		s := serverShared(levels)
		if s < 1 {
			return nil
		}
		ps = PrefixSharing{Source: "server", SharedTokens: s, Prefixes: 1}
	}
	return creditPrefix(ps, facts.Kind, facts.BlockSize)
}

// creditPrefix fills in whether and in what blocks engine kind shares ps's prefix
// (blockSize: the server's declared block size, nil when not declared).
func creditPrefix(ps PrefixSharing, kind engine.Name, blockSize *int64) *PrefixSharing {
	e, known := engine.Of(kind)
	if !known || e.Prefix == nil {
		who := "the server's engine is not known to share"
		if known {
			who = e.Title + " does not share"
		}
		if kind == engine.LlamaCpp {
			who = "llama.cpp shares no prefix across requests (a slot reuses only its own previous prompt, cache_prompt), so every running request holds its own copy"
		} else {
			who += " prompt prefixes across running requests"
		}
		ps.Text = fmt.Sprintf("the %s shared prefix tokens per request are not counted once: %s", groupDigits(int64(math.Round(ps.SharedTokens))), who)
		return &ps
	}
	ps.how = e.Prefix.How
	ps.BlockTokens = e.Prefix.BlockTokens
	if blockSize != nil && *blockSize > 0 {
		ps.BlockTokens = int(*blockSize)
	}
	ps.CountedTokens = math.Floor(ps.SharedTokens/float64(ps.BlockTokens)) * float64(ps.BlockTokens)
	ps.Credited = ps.CountedTokens > 0
	if !ps.Credited {
		ps.Text = fmt.Sprintf("the shared prefix (%.0f tokens) fills no whole block of %d tokens: %s shares nothing of it", ps.SharedTokens, ps.BlockTokens, e.Prefix.How)
	}
	return &ps
}

// shareConcurrency is the concurrency a cache of perCache tokens holds at
// requests of tokens with ps's prefixes held once (capacity.SharedConcurrency).
func shareConcurrency(ps *PrefixSharing, at func(float64) float64, tokens float64, perCache int64) (float64, bool) {
	if ps == nil || !ps.Credited {
		return 0, false
	}
	return capacity.SharedConcurrency(at, float64(perCache), tokens,
		capacity.SharedPrefix{Tokens: ps.CountedTokens, Prefixes: ps.Prefixes, BlockTokens: ps.BlockTokens})
}

// applyPrefixSharing puts the shared prefixes into c's concurrency at the mean and
// p99 request, keeping the unshared figure beside it and saying how far it moved.
func applyPrefixSharing(c *Capacity, ps *PrefixSharing, at func(float64) float64, work workloadTokens) {
	if ps == nil {
		return
	}
	c.PrefixSharing = ps
	if !ps.Credited || at == nil || c.KVCapacityTokens == nil || c.ConcurrencyAtMeanRequest == nil {
		if ps.Credited {
			ps.Credited = false
			ps.Text = "shared prefixes would be counted once, but the KV capacity is not known in tokens"
		}
		return
	}
	v, ok := shareConcurrency(ps, at, work.Mean, *c.KVCapacityTokens)
	if !ok {
		ps.Credited = false
		ps.Text = fmt.Sprintf("the %s shared prefix tokens do not fit the cache beside the requests: not counted once", groupDigits(int64(ps.CountedTokens)))
		return
	}
	before := *c.ConcurrencyAtMeanRequest
	ps.ConcurrencyWithoutSharing = &before
	c.ConcurrencyAtMeanRequest = &v
	if work.P99 > 0 {
		if p, ok := shareConcurrency(ps, at, work.P99, *c.KVCapacityTokens); ok {
			c.ConcurrencyAtP99Request = &p
		}
	}
	how := ps.how
	if how == "" {
		how = "the prefix cache"
	}
	src := "the workload's shared prefix"
	if ps.Source == "server" {
		src = "the cached tokens the server reported (one shared prefix assumed)"
	}
	prefixes := "one shared prefix"
	if ps.Prefixes > 1 {
		prefixes = fmt.Sprintf("%d shared prefixes", ps.Prefixes)
	}
	ps.Text = fmt.Sprintf("shared prefixes counted once: %s of each request's %s tokens are %s (%s), held once per cache by %s in blocks of %d, so the cache holds %.1f requests at once instead of %.1f",
		groupDigits(int64(ps.CountedTokens)), groupDigits(int64(math.Round(work.Mean))), prefixes, src, how, ps.BlockTokens, v, before)
}

// heldTokens is what running requests of prompt and output tokens hold on average
// while they decode (prompt + half the output each), with a credited shared
// prefix held once per prefix rather than once per request: the tokens the KV
// check's observed figure divides by the usage.
func heldTokens(c *Capacity, running, prompt, output float64) float64 {
	per := prompt + output/2
	if c == nil || c.PrefixSharing == nil || !c.PrefixSharing.Credited || prompt <= c.PrefixSharing.CountedTokens {
		return running * per
	}
	ps := c.PrefixSharing
	return running*(per-ps.CountedTokens) + float64(ps.Prefixes)*ps.CountedTokens
}
