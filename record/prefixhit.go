package record

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
)

// Controlled prefix-hit workloads (Options.PrefixHitRate): the cycle sglang
// PR#37359 proposes for benchmarking with a prefix cache. The prompts share a
// prefix sized so that, once cached, it is the target share of each prompt's
// tokens. Before each level the recorder flushes the server's prefix cache where
// the engine lets it (vLLM POST /reset_prefix_cache, SGLang POST /flush_cache),
// then primes the cache with one request per prefix group, then measures; the
// analysis checks each level's achieved hit rate, from the server's counters or
// the cached_tokens of its answers, against the target.

// prefixHitBlock is the unit the shared prefix is sized in: vLLM caches full
// blocks of 16 tokens (SGLang every token), so a prefix of whole blocks is hit
// whole by both.
const prefixHitBlock = 16

// sharedPrefix is the shared prefix the prompts carry: Options.SharedPrefixTokens,
// or the one Options.PrefixHitRate sizes from the median prompt.
func (o *Options) sharedPrefix() int {
	if o.PrefixHitRate <= 0 {
		return o.SharedPrefixTokens
	}
	median := float64(o.PromptTokens)
	if o.PromptLengths != "" {
		if l, err := workload.ParseLengths(o.PromptLengths); err == nil {
			median = l.Quantile(0.5)
		}
	}
	return prefixForHitRate(o.PrefixHitRate, median)
}

// prefixForHitRate is the shared prefix, in whole blocks of 16 tokens (at least
// one), whose share of a prompt of median tokens is nearest rate.
func prefixForHitRate(rate, median float64) int {
	return max(prefixHitBlock, int(math.Round(rate*median/prefixHitBlock))*prefixHitBlock)
}

// validatePrefixHitRate checks Options.PrefixHitRate against the other workload
// options.
func (o *Options) validatePrefixHitRate() error {
	h := o.PrefixHitRate
	switch {
	case h == 0:
		return nil
	case math.IsNaN(h) || h < 0 || h >= 1:
		return fmt.Errorf("Options.PrefixHitRate %v: want a share of the prompt tokens from 0 to below 1", h)
	case o.SharedPrefixTokens > 0:
		return errors.New("Options.PrefixHitRate sizes the shared prefix itself: give it or Options.SharedPrefixTokens, not both")
	case o.Dataset != "" || o.Replay != "":
		return errors.New("Options.PrefixHitRate shapes synthetic prompts: it takes neither Options.Dataset nor Options.Replay")
	case o.Turns > 1:
		return errors.New("Options.PrefixHitRate needs single requests: a conversation's resent history would add hits of its own (Options.Turns)")
	}
	return nil
}

// cacheFlushPath is where engine kind lets a client drop its prefix cache ("":
// nowhere ceiling knows).
func cacheFlushPath(kind engine.Name) string {
	switch kind {
	case engine.VLLM:
		return "/reset_prefix_cache" // vllm/entrypoints/serve/cache/api_router.py
	case engine.SGLang:
		return "/flush_cache" // sglang/srt/entrypoints/http_server.py
	}
	return ""
}

// prefixCycle flushes the server's prefix cache and primes it with each prefix
// group before level index: what it did, for the progress and the level's record.
func (r *recorder) prefixCycle(ctx context.Context, index int) string {
	if r.opts.PrefixHitRate <= 0 {
		return ""
	}
	var did []string
	kind := r.info.Server.Kind
	if path := cacheFlushPath(kind); path == "" {
		did = append(did, "cache not flushed: "+noFlushEndpoint(kind))
	} else {
		status, body, err := r.client.PostEmpty(ctx, path)
		switch {
		case err != nil:
			did = append(did, fmt.Sprintf("cache not flushed: POST %s: %s", path, r.client.Redact(err.Error())))
		case status/100 != 2:
			hint := ""
			if kind == engine.VLLM && status == http.StatusNotFound {
				// entrypoints/serve/cache/api_router.py attaches the route only in dev mode.
				hint = ": vLLM serves it only when started with VLLM_SERVER_DEV_MODE=1"
			}
			did = append(did, fmt.Sprintf("cache not flushed: POST %s answered HTTP %d («%s»)%s", path, status, r.client.Redact(firstLine(string(body))), hint))
		case kind == engine.VLLM:
			// vLLM answers 200 whether or not it reset (it refuses while blocks are in use).
			did = append(did, "cache flushed (POST "+path+" 200; vLLM does not say whether it reset)")
		default:
			did = append(did, "cache flushed (POST "+path+" 200)")
		}
	}
	primes := r.workload.PrimePrompts()
	failed := 0
	for k, p := range primes {
		p.RequestID = fmt.Sprintf("%s-prime-%d-%d", r.info.RunID, index, k)
		p.MinTokens = r.minTokens
		if res := r.client.Do(ctx, p, 1); res.Err != "" || res.Status/100 != 2 {
			failed++
		}
	}
	primed := fmt.Sprintf("%d prefix groups primed", len(primes))
	if len(primes) == 1 {
		primed = "1 prefix group primed"
	}
	if failed > 0 {
		primed += fmt.Sprintf(" (%d priming requests failed)", failed)
	}
	did = append(did, primed)
	out := strings.Join(did, "; ")
	if strings.HasPrefix(out, "cache not flushed") {
		r.warn(fmt.Sprintf("level %d: %s: its hit rate may include prefixes cached before it", index, out))
	}
	return out
}

// noFlushEndpoint says that engine kind has no flush endpoint ceiling knows.
func noFlushEndpoint(kind engine.Name) string {
	if e, ok := engine.Of(kind); ok {
		return "ceiling knows no flush endpoint for a " + e.Title + " server"
	}
	return "the server's engine is not known, so neither is a flush endpoint"
}

// firstLine is s's first line, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
