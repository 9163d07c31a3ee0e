package engine

// llamaCpp is llama.cpp's llama-server. Its /metrics names:
// llamacpp:requests_processing, llamacpp:requests_deferred,
// llamacpp:kv_cache_usage_ratio (removed in newer builds),
// llamacpp:tokens_predicted_total. Its errors (server-context.cpp): "Context size
// has been exceeded." when llama_decode finds no room for the batch even at
// n_batch 1 (a unified cache shared by the slots is full), and the warning "failed
// to find free space in the KV cache" logged on the way; "request (N tokens)
// exceeds the available context size (M tokens)" and "input (N tokens) is larger
// than the max context size" (error type exceed_context_size_error) for a request
// longer than its slot. A request whose output runs into its slot's end stops
// generating there and is answered with what it has; -c is split among the -np
// slots unless --kv-unified, and /props reports each slot's n_ctx.
func llamaCpp() Engine {
	return Engine{
		Name:         LlamaCpp,
		Title:        "llama.cpp",
		OwnedBy:      "llamacpp",
		MetricPrefix: "llamacpp:",
		Metrics: map[string]Role{
			"llamacpp:requests_processing":    RoleRunning,
			"llamacpp:requests_deferred":      RoleWaiting,
			"llamacpp:kv_cache_usage_ratio":   RoleKVUsage,
			"llamacpp:tokens_predicted_total": RoleGenTokens,
		},
		KVExhausted:     []string{"context size has been exceeded", "failed to find free space in the kv cache"},
		ContextExceeded: []string{"exceeds the available context size", "is larger than the max context size", "exceed_context_size_error"},
		SlotContext:     true,
		SlotContextFix:  "restart llama-server with a larger -c or fewer -np slots (llama.cpp splits -c among its -np slots; /props reports the n_ctx of each)",
		CutsAtContext:   true,
	}
}
