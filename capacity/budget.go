package capacity

import (
	"fmt"
	"math"
)

// DefaultUtilization is the fraction of GPU memory the serving engine may use: vLLM's
// --gpu-memory-utilization default, and close to SGLang's --mem-fraction-static.
const DefaultUtilization = 0.9

// DefaultReserveGiB is the activation and overhead reserve per GPU taken out of the
// utilization-capped memory besides the weights. vLLM profiles exactly this before it
// sizes the KV cache: the peak activation memory of a forward pass at
// max_num_batched_tokens (a few hundred MiB to about 1 GiB for the hidden states, MoE
// buffers and sampler logits of 2,048-8,192 batched tokens at TP ≥ 2), plus memory
// allocated outside PyTorch (NCCL buffers, cuBLAS workspaces, CUDA context: a few
// hundred MiB). 1 GiB is the middle of what vLLM logs for such deployments; give the
// figure your server logs (BudgetInput.ReserveGiB) when you have it.
const DefaultReserveGiB = 1.0

// BudgetInput describes the hardware side of the capacity model.
type BudgetInput struct {
	GPU         string  // catalog name ("" with MemoryGiB > 0 for an uncatalogued GPU)
	MemoryGiB   float64 // overrides the catalog's memory per GPU when > 0
	Utilization float64 // 0 = DefaultUtilization
	WeightsGiB  float64 // weights per GPU; 0 = estimate from the config
	ReserveGiB  float64 // < 0 = DefaultReserveGiB; ignored where Reserve is set
	// Reserve, when set, models the reserve from the engine and its batch limits
	// (EngineReserve) instead of the flat ReserveGiB.
	Reserve *ReserveInput
	// GPUs is the GPUs in the deployment; TP, DP, PP and EP its shape (see Shape, whose
	// method applies the defaults: TP 0 is one engine over every GPU, GPUs 0 one engine).
	GPUs, TP, DP, PP int
	EP               bool
	KVDtype          string // auto (the model's dtype), bf16, fp16, fp8 or fp32
	// WeightDtype and ParamsB feed the weight estimate when WeightsGiB is 0: the
	// precision the weights are stored in ("" = from the config's quantization_config
	// and torch_dtype) and the parameter count in billions (0 = from the config).
	WeightDtype string
	ParamsB     float64
}

// Plausible maxima of the budget inputs, far above any deployment, so that sizes
// computed from them stay finite and positive.
const (
	maxGPUs      = 1 << 16 // GPUs in one deployment
	maxGiBPerGPU = 1 << 16 // memory, weights or reserve of one GPU in GiB (64 TiB)
	maxParamsB   = 1e6     // a quadrillion parameters
)

// Check refuses budget inputs no deployment has: negative counts, sizes beyond the
// plausible maxima, NaN and infinities. Its errors name the BudgetInput fields.
// Zero values keep their documented defaults, and a negative ReserveGiB means the
// default reserve.
func (in BudgetInput) Check() error {
	for _, f := range []struct {
		name  string
		v, hi int
	}{{"BudgetInput.GPUs", in.GPUs, maxGPUs}, {"BudgetInput.TP", in.TP, maxGPUs}} {
		if f.v < 0 || f.v > f.hi {
			return fmt.Errorf("%s %d is out of range (0 to %d)", f.name, f.v, f.hi)
		}
	}
	if u := in.Utilization; math.IsNaN(u) || u < 0 || u > 1 {
		return fmt.Errorf("BudgetInput.Utilization %g must be in (0, 1]", u)
	}
	for _, f := range []struct {
		name   string
		v, lo  float64
		hi     float64
		within string
	}{
		{"BudgetInput.MemoryGiB", in.MemoryGiB, 0, maxGiBPerGPU, "GiB per GPU"},
		{"BudgetInput.WeightsGiB", in.WeightsGiB, 0, maxGiBPerGPU, "GiB per GPU"},
		{"BudgetInput.ReserveGiB", in.ReserveGiB, math.Inf(-1), maxGiBPerGPU, "GiB per GPU"},
		{"BudgetInput.ParamsB", in.ParamsB, 0, maxParamsB, "billion parameters"},
	} {
		if math.IsNaN(f.v) || f.v < f.lo || f.v > f.hi {
			return fmt.Errorf("%s %g is out of range (at most %g %s)", f.name, f.v, f.hi, f.within)
		}
	}
	return nil
}

// Budget is the memory of one GPU, split the way the capacity model spends it. It is
// part of the public analysis JSON.
type Budget struct {
	GPU  string `json:"gpu"`
	GPUs int    `json:"gpus"`
	TP   int    `json:"tp"`
	DP   int    `json:"dp"`
	PP   int    `json:"pp"`
	EP   bool   `json:"ep"`
	// KVCaches is the independent KV caches of the deployment (DP ranks × replicas).
	KVCaches     int     `json:"kv_caches"`
	MemoryBytes  int64   `json:"memory_bytes"`
	Utilization  float64 `json:"utilization"`
	WeightsBytes int64   `json:"weights_bytes"`
	ReserveBytes int64   `json:"reserve_bytes"`
	// ReserveModel is the modelled reserve by part where the reserve was modelled
	// (BudgetInput.Reserve); null where it is the flat figure given.
	ReserveModel  *ReserveEstimate `json:"reserve_model,omitempty"`
	KVBudgetBytes int64            `json:"kv_budget_bytes"`
	UnusableBytes int64            `json:"unusable_bytes"` // memory × (1 − utilization)
	KVDtype       string           `json:"kv_dtype"`
}

// PlanResult is the capacity model worked out step by step.
type PlanResult struct {
	Config     *ModelConfig
	KV         KVModel
	GPU        *GPU // nil for an uncatalogued GPU given by memory only
	Budget     Budget
	WeightsHow string // "given" or how they were estimated
	Shape      Shape
	Replicas   int // serving engines (GPUs / (TP × DP × PP))
	// KVTokens is the KV capacity of one KV cache (one DP rank of one replica) in
	// tokens: budget / bytes per token.
	KVTokens int64
	// Weights is the estimate from the config (nil when it cannot be made and the
	// weights were given); WeightsScale is given ÷ estimated weights per GPU (1 when
	// estimated), which carries a measured figure over to other shapes.
	Weights      *Weights
	WeightsScale float64
	// Input is what the plan was made from, defaults applied.
	Input BudgetInput
}

// PlanBudget works out the memory budget per GPU and the KV capacity:
// memory × utilization − weights per GPU − reserve, divided by the KV bytes per token.
func PlanBudget(c *ModelConfig, in BudgetInput) (*PlanResult, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	if err := in.CheckShape(); err != nil {
		return nil, err
	}
	shape := in.Shape()
	in.GPUs, in.TP = shape.GPUs(), shape.TP
	if in.Utilization == 0 {
		in.Utilization = DefaultUtilization
	}
	if in.Utilization < 0 || in.Utilization > 1 {
		return nil, fmt.Errorf("BudgetInput.Utilization %g must be in (0, 1]", in.Utilization)
	}
	if in.ReserveGiB < 0 {
		in.ReserveGiB = DefaultReserveGiB
	}
	if err := CheckEngineShape(c, shape); err != nil {
		return nil, err
	}
	if in.Reserve != nil {
		if err := in.Reserve.Check(); err != nil {
			return nil, err
		}
	}
	kv, err := NewKVModel(c, in.TP, in.KVDtype)
	if err != nil {
		return nil, err
	}
	kv = kv.Stage(shape.PP)
	p := &PlanResult{Config: c, KV: kv, Shape: shape, Replicas: shape.Replicas, WeightsScale: 1}
	var mem int64
	name := in.GPU
	if in.GPU != "" {
		g, err := LookupGPU(in.GPU)
		if err != nil {
			return nil, err
		}
		p.GPU = &g
		mem = g.MemoryBytes
		name = g.Name
	}
	if in.MemoryGiB > 0 {
		mem = int64(in.MemoryGiB * float64(gib))
	}
	if mem <= 0 {
		return nil, fmt.Errorf("no GPU memory: set BudgetInput.GPU (a catalog name) or BudgetInput.MemoryGiB")
	}
	var weights int64
	est, estErr := EstimateWeights(c, in.WeightDtype, in.ParamsB)
	if estErr == nil {
		p.Weights = &est
	}
	if in.WeightsGiB > 0 {
		weights = int64(in.WeightsGiB * float64(gib))
		p.WeightsHow = "given"
		if p.Weights != nil {
			if e := WeightsPerGPU(est, shape); e > 0 {
				p.WeightsScale = float64(weights) / float64(e)
			}
		}
	} else {
		if estErr != nil {
			return nil, estErr
		}
		weights = WeightsPerGPU(est, shape)
		p.WeightsHow = "estimated: " + est.How + " / " + weightsSplit(est, shape)
	}
	capped := int64(float64(mem) * in.Utilization)
	reserve := int64(in.ReserveGiB * float64(gib))
	var model *ReserveEstimate
	if in.Reserve != nil {
		m := EngineReserve(c, shape.TP, *in.Reserve, p.GPU, mem)
		model, reserve = &m, m.TotalBytes
	}
	p.Input = in
	p.Budget = Budget{
		GPU:           name,
		GPUs:          in.GPUs,
		TP:            in.TP,
		DP:            shape.DP,
		PP:            shape.PP,
		EP:            shape.EP,
		KVCaches:      shape.KVCaches(),
		MemoryBytes:   mem,
		Utilization:   in.Utilization,
		WeightsBytes:  weights,
		ReserveBytes:  reserve,
		ReserveModel:  model,
		KVBudgetBytes: capped - weights - reserve,
		UnusableBytes: mem - capped,
		KVDtype:       kv.Dtype,
	}
	if p.Budget.KVBudgetBytes <= 0 {
		return p, fmt.Errorf("no memory left for the KV cache: %.2f GiB × %.2f = %.2f GiB is less than %.2f GiB of weights + %.2f GiB reserve per GPU",
			float64(mem)/float64(gib), in.Utilization, float64(capped)/float64(gib),
			float64(weights)/float64(gib), float64(reserve)/float64(gib))
	}
	if bpt := kv.BytesPerToken(); bpt > 0 {
		p.KVTokens = p.Budget.KVBudgetBytes / bpt
	}
	return p, nil
}

// Concurrency is how many requests of tokens (prompt+output) the deployment's KV caches
// hold at once, all DP ranks and replicas together. It uses the exact per-request footprint (sliding
// windows capped, constant states added), not just tokens / capacity.
func (p *PlanResult) Concurrency(tokens float64) float64 {
	if tokens <= 0 {
		return math.NaN()
	}
	per := p.KV.RequestBytes(tokens)
	if per <= 0 {
		return math.Inf(1)
	}
	return float64(p.Shape.KVCaches()) * float64(p.Budget.KVBudgetBytes) / per
}

// FitsOnce is how many requests of tokens one KV cache (one DP rank) holds: below 1 the
// engine refuses to start at that max_model_len, or preempts constantly, however many
// DP ranks or replicas there are, since a request lives in one cache.
func (p *PlanResult) FitsOnce(tokens float64) float64 {
	return p.Concurrency(tokens) / float64(p.Shape.KVCaches())
}

// weightsSplit says how the weights were spread over the shape, for WeightsHow.
func weightsSplit(w Weights, s Shape) string {
	if s.DP == 1 && s.PP == 1 && (w.ExpertBytes == 0 || s.ExpertShards() == s.TP) {
		return fmt.Sprintf("TP %d", s.TP)
	}
	out := fmt.Sprintf("rest / (TP %d × PP %d)", s.TP, s.PP)
	if w.ExpertBytes > 0 {
		out += fmt.Sprintf(", experts / (%d shards × PP %d)", s.ExpertShards(), s.PP)
	}
	return out
}

// ConcurrencyAt is the concurrency a KV cache of capacityTokens holds at requests of
// tokens each: what vLLM logs as "Maximum concurrency for N tokens per request".
func ConcurrencyAt(capacityTokens int64, tokens float64) float64 {
	if tokens <= 0 {
		return math.NaN()
	}
	return float64(capacityTokens) / tokens
}
