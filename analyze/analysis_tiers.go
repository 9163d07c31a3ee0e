package analyze

// The analysis JSON's types of the KV tiers (stats_tiers.go computes them).

// KVTiers is the share of a level's prompt tokens each KV tier served, inside its
// window, and the host tier's fill and traffic; null shares are not reported.
type KVTiers struct {
	// Source names the counters the shares come from.
	Source       string   `json:"source"`
	PromptTokens float64  `json:"prompt_tokens"`   // prompt tokens in the window, the shares' base
	GPUShare     *float64 `json:"gpu_share"`       // served from the GPU prefix cache
	HostShare    *float64 `json:"host_share"`      // loaded from the host tier (offload, LMCache, HiCache host)
	StorageShare *float64 `json:"storage_share"`   // loaded from storage below the host tier (SGLang HiCache L3)
	Recomputed   *float64 `json:"recompute_share"` // prefilled anew
	// HostUsageMean and HostUsageMax are the host tier's fill (1 = full), where the
	// server reports it; HostCapacityTokens its size (SGLang); HostUsedBytesMax the
	// bytes it held at most (LMCache, which reports no size).
	HostUsageMean      *float64 `json:"host_usage_mean"`
	HostUsageMax       *float64 `json:"host_usage_max"`
	HostCapacityTokens *float64 `json:"host_capacity_tokens"`
	HostUsedBytesMax   *float64 `json:"host_used_bytes_max"`
	// LoadBytesPerS and StoreBytesPerS are the offload traffic: host to GPU
	// (loads) and GPU to host (stores).
	LoadBytesPerS  *float64 `json:"load_bytes_per_s"`
	StoreBytesPerS *float64 `json:"store_bytes_per_s"`
}

// KVTierBinding names the KV tier that binds: "gpu" (the GPU KV cache is full;
// the host tier, if any, serves the overflow) or "host" (the host tier itself is
// full), at the first level where it does, with the evidence in words.
type KVTierBinding struct {
	Tier     string `json:"tier"`
	Level    int    `json:"level"`
	Evidence string `json:"evidence"`
}
