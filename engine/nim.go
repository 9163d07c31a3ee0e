package engine

// nim is NVIDIA NIM, which serves vLLM's metric names without the vllm: prefix.
func nim() Engine {
	return Engine{
		Name:    NIM,
		Title:   "NIM",
		Metrics: vllmMetrics(""),
	}
}
