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
