package capacity

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The activation/overhead reserve, modelled. vLLM sizes its KV cache as
// total memory × utilization − (weights + non-torch memory + the torch peak of a
// profiling forward pass at max_num_batched_tokens and max_num_seqs) − the CUDA-graph
// memory (profiled and subtracted since v0.21). A flat reserve ignores the model and
// the scheduler's limits; where the weights leave a few GiB, the reserve decides the
// answer, so the plan shows the KV budget under both.
//
// The model (per GPU, TP-sharded):
//   - activation peak: max_num_batched_tokens × 2 bytes × (4 × hidden + 3 × the MLP
//     width a token passes through ÷ TP): the residual, attention and normed hidden
//     states, and the gate/up/down intermediates (for MoE the routed top-k and shared
//     experts' widths);
//   - sampler logits: max_num_seqs × vocab × 4 bytes (fp32 logits of the dummy
//     sampler run);
//   - non-torch memory: 0.3 GiB (CUDA context and cuBLAS workspaces), 0.8 GiB with
//     TP > 1 (NCCL and custom all-reduce buffers);
//   - CUDA graphs: 1.2 GiB.
//
// Calibrated on a public vLLM startup log of Llama-3.1-8B on one H100 (util 0.92,
// max_num_batched_tokens 8192, max_num_seqs 1024): weights 14.99 GiB, "torch peak
// memory increase: 1.21GiB", non-KV 16.51 GiB, "Available KV cache memory: 55.05 GiB"
// out of 79.11 × 0.92 = 72.78 GiB, so 2.74 GiB went to the reserve and graphs; the
// model gives 2.89 GiB (+6%). TestModelledReserveCalibration keeps it there.

// ReserveEstimate is the modelled reserve of one GPU, by part, in bytes.
type ReserveEstimate struct {
	MaxBatchedTokens int   `json:"max_num_batched_tokens"`
	MaxSeqs          int   `json:"max_num_seqs"`
	ActivationBytes  int64 `json:"activation_bytes"`
	LogitsBytes      int64 `json:"logits_bytes"`
	NonTorchBytes    int64 `json:"non_torch_bytes"`
	CUDAGraphBytes   int64 `json:"cuda_graph_bytes"`
	TotalBytes       int64 `json:"total_bytes"`
	// Assumption names what the estimate assumes, for the plan's range.
	Assumption string `json:"assumption"`
}

// VLLMBatchDefaults are vLLM's max_num_batched_tokens and max_num_seqs for its
// OpenAI server: 8192 and 1024 on GPUs of 70 GiB or more other than the A100,
// 2048 and 256 elsewhere (EngineArgs.get_batch_defaults).
func VLLMBatchDefaults(g *GPU, memBytes int64) (tokens, seqs int) {
	if memBytes >= 70*gib && (g == nil || !strings.HasPrefix(g.Name, "a100")) {
		return 8192, 1024
	}
	return 2048, 256
}

// ModelledReserve estimates the reserve of one GPU of a TP-way vLLM engine (V1:
// CUDA graphs profiled and subtracted before the KV cache is sized).
func ModelledReserve(c *ModelConfig, tp, maxBatchedTokens, maxSeqs int) ReserveEstimate {
	return EngineReserve(c, tp, ReserveInput{MaxBatchedTokens: maxBatchedTokens, MaxSeqs: maxSeqs}, nil, 0)
}

// The engines whose reserve is modelled, as ReserveInput.Engine names them.
const (
	// EngineVLLM is vLLM V1 (≥ 0.10): the KV cache is what is left after the
	// weights, the profiled activation peak, non-torch memory and the CUDA graphs.
	EngineVLLM = string(engine.VLLM)
	// EngineVLLMV0 is vLLM's V0 engine (≤ 0.9): as V1, but CUDA graphs are captured
	// after the KV cache is allocated, out of the memory above the utilization cap.
	EngineVLLMV0 = "vllm-v0"
	// EngineSGLang is SGLang: the KV pool is the memory free after loading the
	// weights less total × (1 − mem_fraction_static); activations and CUDA graphs
	// live in that remainder, so only the memory held before the weights (CUDA
	// context, NCCL) counts against the pool. --gpu-util is then
	// --mem-fraction-static.
	EngineSGLang = string(engine.SGLang)
)

// ReserveEngineOf is the modelled reserve's engine for a server kind as traces
// name it (trace.ServerInfo.Kind: engine.VLLM, engine.SGLang, ...). ok is false for a kind
// whose reserve is not modelled (llama.cpp, TGI, an unknown server): callers then
// fall back to EngineVLLM, as the plan does, and say so.
func ReserveEngineOf(kind string) (reserveEngine string, ok bool) {
	switch engine.Name(kind) {
	case engine.VLLM:
		return EngineVLLM, true
	case engine.SGLang:
		return EngineSGLang, true
	}
	return EngineVLLM, false
}

// ReserveInput is what the modelled reserve depends on beyond the model and the
// shape: the engine and its batch limits (0 = the engine's defaults on the GPU).
type ReserveInput struct {
	Engine           string // "" = EngineVLLM
	MaxBatchedTokens int    // vLLM max_num_batched_tokens
	MaxSeqs          int    // vLLM max_num_seqs
}

// Check refuses an engine the reserve is not modelled for and negative limits;
// errors name the ReserveInput fields.
func (in ReserveInput) Check() error {
	switch in.Engine {
	case "", EngineVLLM, EngineVLLMV0, EngineSGLang:
	default:
		return fmt.Errorf("ReserveInput.Engine %q: the reserve is modelled for %s, %s and %s only", in.Engine, EngineVLLM, EngineVLLMV0, EngineSGLang)
	}
	if in.MaxBatchedTokens < 0 || in.MaxBatchedTokens > MaxContextTokens {
		return fmt.Errorf("ReserveInput.MaxBatchedTokens %d is out of range (0 to %d)", in.MaxBatchedTokens, int64(MaxContextTokens))
	}
	if in.MaxSeqs < 0 || in.MaxSeqs > 1<<20 {
		return fmt.Errorf("ReserveInput.MaxSeqs %d is out of range (0 to %d)", in.MaxSeqs, 1<<20)
	}
	return nil
}

// EngineReserve estimates the reserve of one GPU of a TP-way engine (see the
// engines above); g and memBytes pick vLLM's batch defaults where in leaves them 0.
func EngineReserve(c *ModelConfig, tp int, in ReserveInput, g *GPU, memBytes int64) ReserveEstimate {
	tp = max(tp, 1)
	var r ReserveEstimate
	r.NonTorchBytes = 3 * gib / 10
	if tp > 1 {
		r.NonTorchBytes = 8 * gib / 10
	}
	if in.Engine == EngineSGLang {
		r.TotalBytes = r.NonTorchBytes
		r.Assumption = "SGLang: the CUDA context and NCCL buffers held before the weights; activations and CUDA graphs use the memory above --mem-fraction-static (given as --gpu-util)"
		return r
	}
	tok, seqs := VLLMBatchDefaults(g, memBytes)
	if in.MaxBatchedTokens > 0 {
		tok = in.MaxBatchedTokens
	}
	if in.MaxSeqs > 0 {
		seqs = in.MaxSeqs
	}
	width := c.Intermediate
	if c.Experts > 0 && c.ExpertIntermediate > 0 {
		width = (max(c.ExpertsPerToken, 1) + c.SharedExperts) * c.ExpertIntermediate
	}
	perToken := int64(2 * (4*c.Hidden + 3*width/tp))
	r.MaxBatchedTokens, r.MaxSeqs = tok, seqs
	r.ActivationBytes = int64(tok) * perToken
	r.LogitsBytes = int64(seqs) * int64(c.Vocab) * 4
	graphs := "CUDA graphs captured (and subtracted, as vLLM V1 does)"
	if in.Engine != EngineVLLMV0 {
		r.CUDAGraphBytes = 12 * gib / 10
	} else {
		graphs = "CUDA graphs captured after the KV cache (vLLM V0), outside the budget"
	}
	r.TotalBytes = r.ActivationBytes + r.LogitsBytes + r.NonTorchBytes + r.CUDAGraphBytes
	r.Assumption = fmt.Sprintf("vLLM at max_num_batched_tokens %s, max_num_seqs %s, %s", numfmt.Int(int64(tok)), numfmt.Int(int64(seqs)), graphs)
	return r
}

// ReserveRange is the KV budget of one GPU under the flat reserve and under the
// modelled one (ReserveAlternative). KVBudgetRange shows it where the two differ by
// more than a tenth and at most 2×: the reserve then decides the answer, and a single
// figure would hide it; a wider range would say nothing to act on.
type ReserveRange struct {
	LowBytes         int64  `json:"low_bytes"`
	HighBytes        int64  `json:"high_bytes"`
	LowTokens        int64  `json:"low_tokens"` // of one KV cache
	HighTokens       int64  `json:"high_tokens"`
	FlatReserveBytes int64  `json:"flat_reserve_bytes"`
	ModelledBytes    int64  `json:"modelled_reserve_bytes"`
	Assumption       string `json:"assumption"` // what the modelled reserve assumes
}

// reserveMatters is how far (a share of the larger budget) the two reserves must
// move the KV budget before the range is shown.
const reserveMatters = 0.10

// maxRangeWidth is the widest range (high ÷ low) shown: a wider one says nothing a
// user can act on, so the headline stands alone with the other reserve named.
const maxRangeWidth = 2.0

// ReserveAlternative is p's KV budget under the other reserve than the headline's:
// the flat DefaultReserveGiB where the headline is modelled, the modelled vLLM
// reserve where the headline is flat (--reserve-gib). ok is false without a model
// config or budget.
func ReserveAlternative(p *PlanResult) (alt ReserveRange, ok bool) {
	if p == nil || p.Config == nil || p.Budget.KVBudgetBytes <= 0 {
		return ReserveRange{}, false
	}
	b := p.Budget
	var flat, modelled ReserveEstimate
	if b.ReserveModel != nil {
		modelled = *b.ReserveModel
		flat.TotalBytes = int64(DefaultReserveGiB * float64(gib))
	} else {
		modelled = EngineReserve(p.Config, p.Shape.TP, ReserveInput{}, p.GPU, b.MemoryBytes)
		flat.TotalBytes = b.ReserveBytes
	}
	free := b.KVBudgetBytes + b.ReserveBytes
	fb, mb := free-flat.TotalBytes, free-modelled.TotalBytes
	r := ReserveRange{LowBytes: max(min(fb, mb), 0), HighBytes: max(fb, mb), FlatReserveBytes: flat.TotalBytes, ModelledBytes: modelled.TotalBytes, Assumption: modelled.Assumption}
	if bpt := p.KV.BytesPerToken(); bpt > 0 {
		r.LowTokens, r.HighTokens = r.LowBytes/bpt, r.HighBytes/bpt
	}
	return r, true
}

// KVBudgetRange is p's KV budget as the reserve goes, flat and modelled
// (ReserveAlternative); false when the reserve moves the budget by a tenth or less,
// or when the range would be more than twice as wide (high > 2 × low): the headline
// then stands alone, and ReserveAlternative names the other figure.
func KVBudgetRange(p *PlanResult) (ReserveRange, bool) {
	r, ok := ReserveAlternative(p)
	if !ok || r.HighBytes <= 0 || float64(r.HighBytes-r.LowBytes) <= reserveMatters*float64(r.HighBytes) {
		return ReserveRange{}, false
	}
	if float64(r.HighBytes) > maxRangeWidth*float64(r.LowBytes) {
		return ReserveRange{}, false
	}
	return r, true
}

// MovesPercent is how far the reserve moves the budget, in percent of the larger.
func (r ReserveRange) MovesPercent() float64 {
	return 100 * float64(r.HighBytes-r.LowBytes) / float64(r.HighBytes)
}
