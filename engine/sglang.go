package engine

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// sglang is SGLang. Its /metrics names: sglang:num_running_reqs,
// sglang:num_queue_reqs, sglang:token_usage, sglang:num_used_tokens,
// sglang:cache_hit_rate, sglang:gen_throughput, sglang:num_retracted_reqs,
// sglang:max_total_num_tokens, sglang:generation_tokens_total. Its KV tier series
// (srt/metrics/collector.py): sglang:cached_tokens{cache_source="device"|"host"|
// "storage"} over sglang:prompt_tokens; sglang:hicache_host_used_tokens and
// sglang:hicache_host_total_tokens are HiCache's host pool fill and size. Its errors (mem_cache
// allocation): "Prefill out of memory" and "Decode out of memory" when even
// eviction frees too few token slots; "Requested token count exceeds the model's
// maximum context length" for a request too long.
func sglang() Engine {
	return Engine{
		Name:         SGLang,
		Title:        "SGLang",
		OwnedBy:      "sglang",
		MetricPrefix: "sglang:",
		Metrics: map[string]Role{
			"sglang:num_running_reqs":        RoleRunning,
			"sglang:num_queue_reqs":          RoleWaiting,
			"sglang:token_usage":             RoleKVUsage,
			"sglang:num_used_tokens":         RoleUsedTokens,
			"sglang:cache_hit_rate":          RoleHitRate,
			"sglang:gen_throughput":          RoleGenRate,
			"sglang:num_retracted_reqs":      RoleRetracted,
			"sglang:max_total_num_tokens":    RoleDeclaredKV,
			"sglang:generation_tokens_total": RoleGenTokens,
		},
		TierMetrics: map[string]Role{
			"sglang:cached_tokens":             RoleTierCachedBySource,
			"sglang:prompt_tokens":             RoleTierCachedOf,
			"sglang:hicache_host_used_tokens":  RoleTierHostUsedTokens,
			"sglang:hicache_host_total_tokens": RoleTierHostTokens,
		},
		KVExhausted:     []string{"prefill out of memory", "decode out of memory"},
		ContextExceeded: []string{"maximum context length"},
		KVSource: func(d DeclaredKV) string {
			return fmt.Sprintf("SGLang max_total_num_tokens %s (/get_server_info) per DP rank", numfmt.Int(d.Tokens))
		},
		ContextFlag: "--context-length",
		MinTokens:   true,
		// SGLang's radix cache, on by default (srt/mem_cache/radix_cache.py):
		// token-granular at the default --page-size 1.
		Prefix: &PrefixSharing{BlockTokens: 1, Default: true, How: "SGLang's radix cache"},
		Bench: &Bench{
			Rerun: func(completions, c int) string {
				return fmt.Sprintf("rerun them with sglang.bench_serving --request-rate inf and --num-prompts well above %d (the completions a level's steady-state window needs at c=%d)", completions, c)
			},
			Higher: "test higher with sglang.bench_serving --max-concurrency above it and --request-rate inf",
		},
	}
}
