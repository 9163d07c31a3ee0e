package capacity

import (
	"fmt"
	"math"
	"strings"
)

// The physical roofline of decoding: the fastest a deployment could produce tokens at
// a given batch, from the bytes each step must move, the FLOPs it must do and the
// all-reduces it must wait for. A bound, not a prediction: real servers add prefill,
// scheduling, sampling and kernel inefficiency on top.
//
// One decode step at batch B (Williams, Waterman and Patterson, "Roofline: an
// insightful visual performance model", CACM 2009, applied to LLM decoding as in
// Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §2):
//
//	t_matmul  = max(W_active / HBM bandwidth,                   bytes per GPU
//	                2 × N_active × B / (GPUs sharing the matmuls × peak FLOP/s))
//	t_attn    = max(B × KV(ctx) / HBM bandwidth, B × A(ctx) / attention peak FLOP/s)
//	t_comm    = n_allreduce × (α + 2(TP−1)/TP × B × hidden × 2 bytes / link bandwidth)
//	t_step    = t_matmul + t_attn + t_comm
//
// The matmuls and attention are bounded each on its own and added, not overlapped
// (the operator-level roofline of Yuan et al., "LLM Inference Unveiled: Survey and
// Roofline Model Insights", 2024): in every layer attention waits for the QKV
// projection and the output projection and MLP wait for attention, so one step's
// weight-bound matmuls cannot hide its KV-bound attention or the reverse. (An
// engine that overlaps the matmuls of one part of the batch with the attention of
// another, as NanoFlow does, could beat this; vLLM, SGLang and TensorRT-LLM run one
// kernel at a time on a GPU.) Decode alone, memory-bound in both, is the same as
// max(t_memory, t_compute); it matters where prefill makes the matmuls compute-bound
// while the decode tokens' attention still reads their KV cache.
//
// per-user tok/s = 1 / t_step and total tok/s = B / t_step. W_active is the weights
// one GPU reads per step: all of its dense share, and of its routed experts those that
// at least one of the step's tokens routes to, 1 − (1 − k/E)^tokens of them under
// uniform routing. KV(ctx) is the cache one request reads per step on that GPU.
//
// A(ctx) is the attention FLOPs of one query token on that GPU: QKᵀ and AV are
// 2 × heads × head_dim FLOPs each per token attended in every attention layer
// (Kaplan et al., "Scaling Laws for Neural Language Models", 2020, Table 1: 2 ×
// n_layer × n_ctx × d_attn per token forward; Pope et al. §2), so
//
//	A(ctx) = Σ attention layers of the stage  2 × ⌈heads / TP⌉ × (d_qk + d_v) × attended
//
// where attended is ctx in a full-attention layer and min(ctx, window) in a
// sliding-window one (gpt-oss alternates 128-token windows and full attention). The
// query heads count, not the KV heads: GQA shares keys and values between heads but
// every query head still does its own dot products. Heads shard over TP, rounded up.
// MLA (DeepSeek-V3, Kimi-K2) is counted in its unabsorbed form, d_qk =
// qk_nope_head_dim + qk_rope_head_dim and d_v = v_head_dim: engines decode with the
// latent absorbed (kv_lora_rank + qk_rope_head_dim per dot product, more FLOPs), so
// the smaller count keeps the bound a bound. Linear-attention and state-space layers
// are left out (their FLOPs do not grow with the context).
//
// Attention runs at its own peak, not the weights': the BF16 tensor cores, or the
// FP8 ones where the KV cache is FP8 and the GPU has them (TensorRT-LLM's FP8
// context and generation kernels; the higher of the two peaks a server might use,
// so again a bound). A weight-only INT4 or an FP4 checkpoint attends in BF16/FP8.
//
// Assumptions, stated because they decide the PCIe case:
//   - Two all-reduces per layer under TP (after attention and after the MLP), ring
//     algorithm, bf16 activations, not overlapped with compute (decode's layers wait
//     for them). Under EP, two all-to-alls per MoE layer (dispatch and combine).
//   - α, the latency of one small all-reduce: AllReduceLatencyNVLink inside an
//     NVLink/NVSwitch or Infinity Fabric node, AllReduceLatencyPCIe over PCIe through
//     the host bridge (order of magnitude of nccl-tests' small-message latencies;
//     vLLM's custom all-reduce is faster on NVLink, PCIe without P2P slower).
//   - Link bandwidth is half the catalog's bidirectional figure, per direction.
//   - Prefill (At; AtWorkload adds it), sampling and the pipeline bubble are left out;
//     they only lower the real curve. With PP, a request's token passes every stage, so its
//     interval is PP stage steps, with PP microbatches in flight.

// All-reduce latencies the roofline assumes (see above).
const (
	AllReduceLatencyNVLink = 8e-6
	AllReduceLatencyPCIe   = 25e-6
)

// Roofline is the decode roofline of one planned deployment.
type Roofline struct {
	GPU   GPU
	Shape Shape
	KV    KVModel // per GPU of one pipeline stage

	// RestBytesPerGPU and ExpertBytesPerGPU are the weights resident on one GPU.
	RestBytesPerGPU, ExpertBytesPerGPU float64
	ActiveParams                       float64 // per token
	Experts, ExpertsPerToken           int
	Hidden                             int
	Layers, MoELayers                  int // per stage
	ComputeDtype                       string
	PeakFLOPs                          float64 // per GPU, in ComputeDtype

	// AttnFLOPsPerPair is the attention FLOPs per GPU per attention layer of one query
	// token for each token it attends: 2 × ⌈heads / TP⌉ × (d_qk + d_v). The layers and
	// the window are KV's (one stage's).
	AttnFLOPsPerPair  float64
	AttnDtype         string
	AttnPeakFLOPs     float64 // per GPU, in AttnDtype
	LinkBytesS        float64 // per direction
	AllReduceLatencyS float64
}

// RooflinePoint is the roofline at one batch.
type RooflinePoint struct {
	Batch                float64 // concurrent decoding requests, whole deployment
	ContextTokens        float64 // tokens in each request's KV cache
	WeightBytes, KVBytes float64 // read per GPU per step
	// MemoryS is every byte read ÷ bandwidth and ComputeS every FLOP ÷ its peak;
	// the step adds the matmuls' and attention's each bound by the larger of its own.
	MemoryS, ComputeS, CommS float64
	AttentionS               float64 // the part of ComputeS that is attention
	StepS                    float64 // a request's interval between tokens
	PerUserTokS, TotalTokS   float64
	Bound                    string // "memory", "compute" or "communication"
}

// NewRoofline builds the roofline of a plan. It needs a catalog GPU (bandwidth and
// FLOP/s) and a parameter count from the config.
func NewRoofline(p *PlanResult) (*Roofline, error) {
	if p.GPU == nil {
		return nil, fmt.Errorf("the roofline needs a GPU from the catalog (BudgetInput.GPU) for its bandwidth and FLOP/s")
	}
	if p.Weights == nil {
		return nil, fmt.Errorf("the roofline needs the parameter count: the config could not be counted (set BudgetInput.ParamsB)")
	}
	c, s, w := p.Config, p.Shape, *p.Weights
	r := &Roofline{GPU: *p.GPU, Shape: s, KV: p.KV, Experts: c.Experts, ExpertsPerToken: c.ExpertsPerToken,
		Hidden: c.Hidden, ActiveParams: float64(w.ActiveParams), LinkBytesS: p.GPU.InterconnectBytesS / 2}
	// The weights resident per GPU, split like the estimate and scaled to what was given.
	scale := p.WeightsScale
	if scale <= 0 {
		scale = 1
	}
	r.RestBytesPerGPU = float64(w.RestBytes) / float64(s.TP*s.PP) * scale
	r.ExpertBytesPerGPU = float64(w.ExpertBytes) / float64(s.ExpertShards()*s.PP) * scale
	r.Layers = (c.Layers + s.PP - 1) / s.PP
	if c.Experts > 0 {
		freq := max(1, c.MoELayerFreq)
		n := 0
		for i := range c.Layers {
			if i >= c.DenseLayers && i%freq == 0 {
				n++
			}
		}
		r.MoELayers = (n + s.PP - 1) / s.PP
	}
	r.ComputeDtype, r.PeakFLOPs = computePeak(*p.GPU, c, p.Input.WeightDtype)
	if r.PeakFLOPs <= 0 {
		return nil, fmt.Errorf("GPU %s has no peak FLOP/s in the catalog", p.GPU.Name)
	}
	r.AttnFLOPsPerPair = attnFLOPsPerPair(c, s.TP)
	r.AttnDtype, r.AttnPeakFLOPs = attentionPeak(*p.GPU, p.KV.Dtype)
	if r.AttnPeakFLOPs <= 0 {
		r.AttnDtype, r.AttnPeakFLOPs = r.ComputeDtype, r.PeakFLOPs
	}
	r.AllReduceLatencyS = AllReduceLatencyNVLink
	if p.GPU.Link == LinkPCIe {
		r.AllReduceLatencyS = AllReduceLatencyPCIe
	}
	return r, nil
}

// computePeak picks the tensor cores the matmuls run on: FP8 for FP8 weights (W8A8)
// and FP4 for NVFP4/MXFP4 where the GPU has them, else BF16 (weight-only INT4/FP4
// kernels such as Marlin dequantize to BF16).
func computePeak(g GPU, c *ModelConfig, weightDtype string) (string, float64) {
	d := strings.ToLower(weightDtype)
	if d == "" {
		d = c.QuantMethod
	}
	switch {
	case (d == "fp8" || d == "int8") && g.FP8FLOPs > 0:
		return "fp8", g.FP8FLOPs
	case (d == "nvfp4" || d == "mxfp4" || d == "fp4" || d == "modelopt") && g.FP4FLOPs > 0:
		return "fp4", g.FP4FLOPs
	}
	return "bf16", g.BF16FLOPs
}

// attnFLOPsPerPair is 2 × ⌈heads / TP⌉ × (d_qk + d_v): QKᵀ and AV of one query
// token against one attended token in one layer, on one GPU (see the top of the file
// for MLA). 0 where the config gives no heads.
func attnFLOPsPerPair(c *ModelConfig, tp int) float64 {
	if c.Heads <= 0 {
		return 0
	}
	dqk, dv := c.HeadDim, c.HeadDim
	if c.KVLoraRank > 0 && c.QKNopeHeadDim > 0 && c.VHeadDim > 0 {
		dqk, dv = c.QKNopeHeadDim+c.QKRopeHeadDim, c.VHeadDim
	}
	heads := (c.Heads + max(tp, 1) - 1) / max(tp, 1)
	return 2 * float64(heads) * float64(dqk+dv)
}

// attentionPeak picks the tensor cores attention runs on: FP8 where the KV cache is
// FP8 and the GPU has FP8 tensor cores, else BF16.
func attentionPeak(g GPU, kvDtype string) (string, float64) {
	if strings.HasPrefix(strings.ToLower(kvDtype), "fp8") && g.FP8FLOPs > 0 {
		return "fp8", g.FP8FLOPs
	}
	return "bf16", g.BF16FLOPs
}

// attendedPairs is the query–key pairs of a causal prompt of tokens in one layer that
// attends at most window tokens back (window ≤ 0: the whole prompt): Σ min(i, window)
// over the prompt's positions, P²/2 without a window.
func attendedPairs(tokens, window float64) float64 {
	if tokens <= 0 {
		return 0
	}
	if window <= 0 || tokens <= window {
		return tokens * tokens / 2
	}
	return window*tokens - window*window/2
}

// At is the roofline at batch concurrent decoding requests over the whole deployment,
// each holding contextTokens in its KV cache.
func (r *Roofline) At(batch, contextTokens float64) RooflinePoint {
	return r.step(batch, contextTokens, 0, 0)
}

// AtWorkload is the roofline of whole requests, prefill included: batch requests
// decoding at once, each with promptTokens of prompt and outputTokens of output. In
// the steady state every output token comes with promptTokens ÷ outputTokens prompt
// tokens to prefill, which chunked prefill folds into the decode steps: they add
// their matmul FLOPs (2 × active parameters per token), their attention FLOPs and
// their all-reduce bytes to each step, but no weight reads: a real engine prefills a
// prompt in a few large chunks, whose weight (and a MoE's expert) reads are spread
// over the whole request and are left out here, so that it stays a bound. A prompt
// of P tokens attends causally, P²/2 query–key pairs per full-attention layer
// (Σ min(i, window) per sliding one), whatever the chunking: each step carries
// 1 ÷ outputTokens of them. Each request holds its prompt and half its output in the
// KV cache on average, and its decode token attends to that. Longer prompts cost
// compute and KV reads and never raise the bound.
func (r *Roofline) AtWorkload(batch, promptTokens, outputTokens float64) RooflinePoint {
	if outputTokens <= 0 {
		return RooflinePoint{Batch: batch}
	}
	prompt := math.Max(promptTokens, 0)
	return r.step(batch, prompt+outputTokens/2, prompt/outputTokens, r.promptAttnFLOPs(prompt)/outputTokens)
}

// PrefillS is the time one prompt of promptTokens takes to prefill alone at the
// peaks: its matmuls, 2 × active parameters per token over the TP GPUs sharing
// them, and its causal attention, through every pipeline stage. Weight reads are
// left out (a long prompt is compute-bound); 0 for no prompt.
func (r *Roofline) PrefillS(promptTokens float64) float64 {
	if promptTokens <= 0 || r.PeakFLOPs <= 0 {
		return 0
	}
	t := 2 * r.ActiveParams * promptTokens / float64(r.Shape.TP) / r.PeakFLOPs
	if r.AttnPeakFLOPs > 0 {
		t += float64(r.Shape.PP) * r.promptAttnFLOPs(promptTokens) / r.AttnPeakFLOPs
	}
	return t
}

// promptAttnFLOPs is the attention FLOPs per GPU of prefilling one prompt of tokens
// over the stage's attention layers.
func (r *Roofline) promptAttnFLOPs(tokens float64) float64 {
	pairs := float64(r.KV.FullLayers)*attendedPairs(tokens, 0) +
		float64(r.KV.SlidingLayers)*attendedPairs(tokens, float64(r.KV.Window))
	return r.AttnFLOPsPerPair * pairs
}

// decodeAttnFLOPs is the attention FLOPs per GPU of one decode token attending
// contextTokens over the stage's attention layers.
func (r *Roofline) decodeAttnFLOPs(contextTokens float64) float64 {
	slide := math.Max(contextTokens, 0)
	if r.KV.Window > 0 {
		slide = math.Min(slide, float64(r.KV.Window))
	}
	pairs := float64(r.KV.FullLayers)*math.Max(contextTokens, 0) + float64(r.KV.SlidingLayers)*slide
	return r.AttnFLOPsPerPair * pairs
}

// step is one decode step at batch with prefillPerToken prompt tokens prefilled per
// decoded token in the same step, and prefillAttnPerToken attention FLOPs per GPU of
// theirs per decoded token.
func (r *Roofline) step(batch, contextTokens, prefillPerToken, prefillAttnPerToken float64) RooflinePoint {
	s := r.Shape
	pt := RooflinePoint{Batch: batch, ContextTokens: contextTokens}
	if batch <= 0 {
		return pt
	}
	// Requests per DP rank, and per pipeline microbatch: the batch one GPU steps over.
	m := batch / float64(s.Replicas*s.DP*s.PP)
	tokens := m * (1 + prefillPerToken) // tokens through the matmuls per step
	expertTokens := m
	if s.EP {
		expertTokens = m * float64(s.DP)
	}
	touched := 1.0
	if r.Experts > 0 && r.ExpertsPerToken > 0 {
		touched = 1 - math.Pow(1-float64(r.ExpertsPerToken)/float64(r.Experts), expertTokens)
	}
	pt.WeightBytes = r.RestBytesPerGPU + r.ExpertBytesPerGPU*touched
	pt.KVBytes = m * r.KV.RequestBytes(contextTokens)
	pt.MemoryS = (pt.WeightBytes + pt.KVBytes) / r.GPU.BandwidthBytesS
	pt.ComputeS = 2 * r.ActiveParams / float64(s.PP) * tokens / float64(s.TP) / r.PeakFLOPs
	if r.AttnPeakFLOPs > 0 {
		pt.AttentionS = m * (r.decodeAttnFLOPs(contextTokens) + prefillAttnPerToken) / r.AttnPeakFLOPs
		pt.ComputeS += pt.AttentionS
	}
	const actBytes = 2
	if s.TP > 1 {
		tp := float64(s.TP)
		msg := 2 * (tp - 1) / tp * tokens * float64(r.Hidden) * actBytes
		pt.CommS += 2 * float64(r.Layers) * (r.AllReduceLatencyS + msg/r.LinkBytesS)
	}
	if g := s.DP * s.TP; s.EP && g > 1 && r.MoELayers > 0 {
		msg := tokens * float64(r.ExpertsPerToken) * float64(r.Hidden) * actBytes * float64(g-1) / float64(g) / float64(s.TP)
		pt.CommS += 2 * float64(r.MoELayers) * (r.AllReduceLatencyS + msg/r.LinkBytesS)
	}
	// The matmuls and attention run one after the other (see the top of the file):
	// each is bound by its own bytes or its own FLOPs.
	bw := r.GPU.BandwidthBytesS
	matmulS := pt.ComputeS - pt.AttentionS
	gemm := math.Max(pt.WeightBytes/bw, matmulS)
	attn := math.Max(pt.KVBytes/bw, pt.AttentionS)
	stage := gemm + attn + pt.CommS
	// Bound names what most of the step waits for.
	memS, compS := 0.0, 0.0
	for _, op := range [][2]float64{{pt.WeightBytes / bw, matmulS}, {pt.KVBytes / bw, pt.AttentionS}} {
		if op[1] > op[0] {
			compS += op[1]
		} else {
			memS += op[0]
		}
	}
	pt.StepS = float64(s.PP) * stage
	pt.PerUserTokS = 1 / pt.StepS
	pt.TotalTokS = batch / pt.StepS
	switch {
	case pt.CommS >= memS && pt.CommS >= compS:
		pt.Bound = "communication"
	case compS > memS:
		pt.Bound = "compute"
	default:
		pt.Bound = "memory"
	}
	return pt
}
