package analyze

// Options configure an analysis. The zero value analyzes without SLOs and without a
// hardware model (the capacity then comes only from what the server revealed).
type Options struct {
	SLO SLO
	// ModelConfig is the path of a Hugging Face config.json ("" = none).
	ModelConfig string
	GPU         string  // catalog name, e.g. "h100-sxm"
	GPUs        int     // GPUs in the deployment
	TP          int     // tensor-parallel size
	MemoryGiB   float64 // overrides the catalog's memory per GPU when > 0
	Utilization float64 // fraction of GPU memory the server may use (0 = 0.9)
	WeightsGiB  float64 // weights per GPU... see capacity.go for the exact meaning
	ReserveGiB  float64 // activation/overhead reserve per GPU (< 0 = default)
	KVDtype     string  // auto, bf16, fp16, fp8
	// WeightDtype and ParamsB feed the weight estimate when WeightsGiB is 0: the
	// precision the weights are stored in ("" = from the config's quantization_config
	// and torch_dtype) and the parameter count in billions (0 = from the config).
	WeightDtype string
	ParamsB     float64
	// MaxModelLen overrides the context length used for "concurrency at max_model_len"
	// when the server did not reveal it (0 = the config's max_position_embeddings).
	MaxModelLen int64
	// TimelineLevel picks the level drawn on the per-request timeline (-1 = the level
	// nearest the realistic ceiling).
	TimelineLevel int
}
