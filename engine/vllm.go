package engine

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// vllm is vLLM. Its /metrics names (vllm:...) and their history:
// vllm:num_requests_running, vllm:num_requests_waiting (the newer
// vllm:num_requests_waiting_by_reason splits the same requests and is not added),
// vllm:kv_cache_usage_perc (before v0.10 vllm:gpu_cache_usage_perc; a fraction
// despite the name), vllm:num_preemptions_total, vllm:prefix_cache_queries_total
// and _hits_total (older vllm:gpu_prefix_cache_*), vllm:generation_tokens_total,
// vllm:cache_config_info (kv_cache_size_tokens when present, else num_gpu_blocks ×
// block_size). Its KV tier series (vllm/v1/metrics/loggers.py):
// vllm:prompt_tokens_by_source{source="local_cache_hit"|"external_kv_transfer"|
// "local_compute"} splits the prompt tokens exactly; where it is absent,
// vllm:prefix_cache_hits (GPU) and vllm:external_prefix_cache_hits (a KV
// connector's, e.g. CPU offload or LMCache) over vllm:prompt_tokens. The
// offloading connector's traffic is vllm:kv_offload_total_bytes{transfer_type=
// "cpu_to_gpu"|"gpu_to_cpu"} (the case of transfer_type varies by version) and
// its host pool's fill vllm:kv_offload_cpu_cache_usage_perc (a fraction, as
// vLLM's other _perc gauges). Its errors: the V0 block manager's "exceeds the capacity of
// block_manager"; "This model's maximum context length is N tokens" and "... is
// longer than the model's context length" for a request too long.
func vllm() Engine {
	return Engine{
		Name:         VLLM,
		Title:        "vLLM",
		OwnedBy:      "vllm",
		MetricPrefix: "vllm:",
		Metrics:      vllmMetrics("vllm:"),
		TierMetrics: map[string]Role{
			"vllm:prompt_tokens_by_source":         RoleTierPromptBySource,
			"vllm:prompt_tokens":                   RoleTierPrompt,
			"vllm:prefix_cache_hits":               RoleTierGPUHits,
			"vllm:external_prefix_cache_hits":      RoleTierExternalHits,
			"vllm:kv_offload_total_bytes":          RoleTierOffloadBytes,
			"vllm:kv_offload_cpu_cache_usage_perc": RoleTierHostUsage,
		},
		DeclaredKVSeries: "vllm:cache_config_info",
		KVExhausted:      []string{"exceeds the capacity of block_manager"},
		ContextExceeded:  []string{"maximum context length", "is longer than the model's context length"},
		KVSource: func(d DeclaredKV) string {
			v := d.Tokens
			if d.NumGPUBlocks != nil && d.BlockSize != nil && *d.NumGPUBlocks**d.BlockSize != v {
				return fmt.Sprintf("vLLM cache_config_info kv_cache_size_tokens %s per engine (num_gpu_blocks %d × block_size %d = %s counts the smallest group's blocks)",
					numfmt.Int(v), *d.NumGPUBlocks, *d.BlockSize, numfmt.Int(*d.NumGPUBlocks**d.BlockSize))
			}
			if d.NumGPUBlocks != nil && d.BlockSize != nil {
				return fmt.Sprintf("vLLM cache_config_info: num_gpu_blocks %d × block_size %d = %s tokens per engine", *d.NumGPUBlocks, *d.BlockSize, numfmt.Int(v))
			}
			return fmt.Sprintf("vLLM cache_config_info: %s tokens per engine", numfmt.Int(v))
		},
		ContextFlag: "--max-model-len",
		MinTokens:   true,
		// vLLM v1's automatic prefix caching, on by default (vllm/v1/core/
		// block_pool.py): full blocks of block_size (16 on GPUs) under chained
		// hashes, shared by reference count.
		Prefix: &PrefixSharing{BlockTokens: 16, Default: true, How: "vLLM's automatic prefix caching"},
		Bench: &Bench{
			Rerun: func(completions, c int) string {
				return fmt.Sprintf("rerun them with vllm bench serve --request-rate inf (a finite rate under --max-concurrency cannot keep that many requests in flight) and --num-prompts well above %d (the completions a level's steady-state window needs at c=%d)", completions, c)
			},
			Higher: "test higher with vllm bench serve --max-concurrency above it and --request-rate inf (a finite rate caps what each level offers)",
		},
	}
}

// vllmMetrics are vLLM's series names under prefix ("vllm:", or "" for NIM, which
// serves the same names unprefixed).
func vllmMetrics(prefix string) map[string]Role {
	m := map[string]Role{}
	for n, role := range map[string]Role{
		"num_requests_running":           RoleRunning,
		"num_requests_waiting":           RoleWaiting,
		"kv_cache_usage_perc":            RoleKVUsage,
		"gpu_cache_usage_perc":           RoleKVUsageOld,
		"num_preemptions_total":          RolePreemptions,
		"prefix_cache_queries_total":     RolePrefixQueries,
		"prefix_cache_hits_total":        RolePrefixHits,
		"gpu_prefix_cache_queries_total": RolePrefixQueriesOld,
		"gpu_prefix_cache_hits_total":    RolePrefixHitsOld,
		"generation_tokens_total":        RoleGenTokens,
		"cache_config_info":              RoleCacheConfig,
	} {
		m[prefix+n] = role
	}
	return m
}
