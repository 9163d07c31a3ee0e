package capacity

import (
	"fmt"
	"strings"

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

// ModelledReserve estimates the reserve of one GPU of a TP-way engine.
func ModelledReserve(c *ModelConfig, tp, maxBatchedTokens, maxSeqs int) ReserveEstimate {
	tp = max(tp, 1)
	width := c.Intermediate
	if c.Experts > 0 && c.ExpertIntermediate > 0 {
		width = (max(c.ExpertsPerToken, 1) + c.SharedExperts) * c.ExpertIntermediate
	}
	perToken := int64(2 * (4*c.Hidden + 3*width/tp))
	r := ReserveEstimate{
		MaxBatchedTokens: maxBatchedTokens,
		MaxSeqs:          maxSeqs,
		ActivationBytes:  int64(maxBatchedTokens) * perToken,
		LogitsBytes:      int64(maxSeqs) * int64(c.Vocab) * 4,
		NonTorchBytes:    3 * gib / 10,
		CUDAGraphBytes:   12 * gib / 10,
	}
	if tp > 1 {
		r.NonTorchBytes = 8 * gib / 10
	}
	r.TotalBytes = r.ActivationBytes + r.LogitsBytes + r.NonTorchBytes + r.CUDAGraphBytes
	r.Assumption = fmt.Sprintf("vLLM's defaults on this GPU: max_num_batched_tokens %s, max_num_seqs %s, CUDA graphs captured (and subtracted, as vLLM ≥ 0.21 does)", numfmt.Int(int64(maxBatchedTokens)), numfmt.Int(int64(maxSeqs)))
	return r
}

// ReserveRange is the KV budget of one GPU under the flat reserve and under the
// modelled one, where the two differ by more than a tenth: the reserve then decides
// the answer, and a single figure would hide it.
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

// KVBudgetRange is p's KV budget as the reserve goes, flat (p.Budget) and modelled
// with vLLM's batch defaults for the GPU (ModelledReserve); false when there is no
// model config or budget, or the reserve moves the budget by a tenth or less.
func KVBudgetRange(p *PlanResult) (ReserveRange, bool) {
	if p == nil || p.Config == nil || p.Budget.KVBudgetBytes <= 0 {
		return ReserveRange{}, false
	}
	tok, seqs := VLLMBatchDefaults(p.GPU, p.Budget.MemoryBytes)
	m := ModelledReserve(p.Config, p.Shape.TP, tok, seqs)
	b := p.Budget
	modelled := b.KVBudgetBytes + b.ReserveBytes - m.TotalBytes
	lo, hi := min(b.KVBudgetBytes, modelled), max(b.KVBudgetBytes, modelled)
	if hi <= 0 || float64(hi-lo) <= reserveMatters*float64(hi) {
		return ReserveRange{}, false
	}
	lo = max(lo, 0)
	r := ReserveRange{LowBytes: lo, HighBytes: hi, FlatReserveBytes: b.ReserveBytes, ModelledBytes: m.TotalBytes, Assumption: m.Assumption}
	if bpt := p.KV.BytesPerToken(); bpt > 0 {
		r.LowTokens, r.HighTokens = lo/bpt, hi/bpt
	}
	return r, true
}

// MovesPercent is how far the reserve moves the budget, in percent of the larger.
func (r ReserveRange) MovesPercent() float64 {
	return 100 * float64(r.HighBytes-r.LowBytes) / float64(r.HighBytes)
}
