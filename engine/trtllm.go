package engine

// tensorRTLLM is TensorRT-LLM behind Triton. Its /metrics names:
// nv_trt_llm_request_metrics{request_type=active|waiting|max} and
// nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=fraction|used|max|tokens_per}.
func tensorRTLLM() Engine {
	return Engine{
		Name:         TensorRTLLM,
		Title:        "TensorRT-LLM",
		MetricPrefix: "nv_trt_llm_",
		Metrics: map[string]Role{
			"nv_trt_llm_request_metrics":        RoleTRTRequests,
			"nv_trt_llm_kv_cache_block_metrics": RoleTRTKVBlocks,
		},
	}
}
