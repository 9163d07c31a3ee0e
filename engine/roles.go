package engine

// Role is what one /metrics series measures, in the analysis' engine-neutral
// terms: each engine's Metrics map its own names to these.
type Role string

// The roles. A series with an Old role is read only when the newer name is absent.
const (
	RoleRunning          Role = "running"   // requests being served (a gauge)
	RoleWaiting          Role = "waiting"   // requests queued (a gauge)
	RoleKVUsage          Role = "kv"        // KV cache usage, a fraction (1 = full)
	RoleKVUsageOld       Role = "kv_old"    // the same under an older name
	RoleUsedTokens       Role = "used"      // KV tokens in use
	RoleDeclaredKV       Role = "declared"  // the KV capacity the engine declares, tokens
	RoleCacheConfig      Role = "config"    // an info series whose labels declare the KV capacity
	RolePreemptions      Role = "preempt"   // preempted requests (a counter)
	RoleRetracted        Role = "retracted" // retracted requests (SGLang's preemption)
	RolePrefixQueries    Role = "pq"        // prefix cache queries, tokens (a counter)
	RolePrefixHits       Role = "ph"        // prefix cache hits, tokens (a counter)
	RolePrefixQueriesOld Role = "pq_old"
	RolePrefixHitsOld    Role = "ph_old"
	RoleHitRate          Role = "hitrate" // prefix cache hit rate, a fraction (a gauge)
	RoleGenTokens        Role = "gen"     // generated tokens (a counter)
	RoleGenRate          Role = "genrate" // generation throughput, tokens/s (a gauge)
	RoleTRTRequests      Role = "trt_req" // TensorRT-LLM's request gauges, by request_type
	RoleTRTKVBlocks      Role = "trt_kv"  // TensorRT-LLM's KV block gauges, by kv_cache_block_type
)

// The roles of the series that say which KV tier served a request's prompt
// tokens: the GPU's prefix cache, a host tier (vLLM's KV offloading connector,
// LMCache, SGLang's HiCache host pool) or none (recomputed). Their names are
// written without the _total suffix prometheus_client adds to a counter, and
// each role is one series' only, so that the analysis can name the series it
// read by its role (TierSeries).
const (
	// vLLM (vllm/v1/metrics/loggers.py).
	RoleTierPromptBySource Role = "tier_prompt_by_source" // prompt tokens by source (local_cache_hit, external_kv_transfer, local_compute)
	RoleTierPrompt         Role = "tier_prompt"           // prompt tokens, the base of the two hit counters below
	RoleTierGPUHits        Role = "tier_gpu_hits"         // prompt tokens hit in the GPU's prefix cache
	RoleTierExternalHits   Role = "tier_external_hits"    // prompt tokens a KV connector loaded (CPU offload, LMCache)
	RoleTierOffloadBytes   Role = "tier_offload_bytes"    // the offloading connector's traffic, bytes, by transfer_type (cpu_to_gpu, gpu_to_cpu)
	RoleTierHostUsage      Role = "tier_host_usage"       // the offloading connector's host pool fill, a fraction
	// LMCache (lmcache/observability.py), a KV connector beside vLLM.
	RoleTierConnectorHits      Role = "tier_connector_hits"      // prompt tokens the connector had
	RoleTierConnectorRequested Role = "tier_connector_requested" // prompt tokens asked of it
	RoleTierConnectorBytes     Role = "tier_connector_bytes"     // bytes its local (CPU) backend holds
	// SGLang (srt/metrics/collector.py).
	RoleTierCachedBySource Role = "tier_cached_by_source" // cached prompt tokens by cache_source (device, host, storage)
	RoleTierCachedOf       Role = "tier_cached_of"        // prompt tokens, the base of the cached tokens above
	RoleTierHostUsedTokens Role = "tier_host_used_tokens" // HiCache host pool tokens in use
	RoleTierHostTokens     Role = "tier_host_tokens"      // HiCache host pool size, tokens
)
