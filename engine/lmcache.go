package engine

// LMCache is a KV connector, not an engine: a library vLLM (or SGLang) loads to
// keep KV cache in CPU memory, on disk or remotely and load it back instead of
// recomputing a prefix. It serves no requests of its own, so it is not in All;
// its /metrics series appear beside vLLM's, on the same endpoint, under its own
// prefix. Its names (lmcache/observability.py): lmcache:num_hit_tokens over
// lmcache:num_requested_tokens (counters), lmcache:local_cache_usage (bytes its
// local backend holds).
func LMCache() Connector {
	return Connector{
		Title:        "LMCache",
		MetricPrefix: "lmcache:",
		TierMetrics: map[string]Role{
			"lmcache:num_hit_tokens":       RoleTierConnectorHits,
			"lmcache:num_requested_tokens": RoleTierConnectorRequested,
			"lmcache:local_cache_usage":    RoleTierConnectorBytes,
		},
	}
}
