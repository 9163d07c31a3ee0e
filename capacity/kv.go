package capacity

import (
	"fmt"
	"strings"
)

// KVModel is the per-GPU KV-cache footprint of one model at one tensor-parallel size.
type KVModel struct {
	Kind       string // "mla", "gqa" or "mha" (of the attention layers), "state" when none
	Dtype      string // resolved KV dtype
	DtypeBytes int64
	TP         int

	FullLayers, SlidingLayers, StateLayers int
	Window                                 int64 // sliding window in tokens

	// FullBytesPerToken is what every token of a request costs in the full-attention
	// layers, per GPU; SlidingBytesPerToken what it costs in the sliding layers, up to
	// Window tokens; StateBytesPerRequest the constant state of linear/Mamba layers.
	FullBytesPerToken    int64
	SlidingBytesPerToken int64
	StateBytesPerRequest int64

	// Derivation is the formula with the config's numbers, for plan and the report.
	Derivation []string
}

// BytesPerToken is the KV cost of one token of a request shorter than any sliding
// window: the figure servers log and capacity in tokens divides by.
func (k KVModel) BytesPerToken() int64 { return k.FullBytesPerToken + k.SlidingBytesPerToken }

// RequestBytes is the KV memory one request of tokens (prompt+output) holds at its end.
func (k KVModel) RequestBytes(tokens float64) float64 {
	slide := tokens
	if k.Window > 0 && slide > float64(k.Window) {
		slide = float64(k.Window)
	}
	return float64(k.FullBytesPerToken)*tokens + float64(k.SlidingBytesPerToken)*slide + float64(k.StateBytesPerRequest)
}

// NewKVModel computes the KV footprint per GPU. kvDtype is "auto" (the model's
// torch_dtype, bf16 when absent), "bf16", "fp16", "fp8" or "fp32".
func NewKVModel(c *ModelConfig, tp int, kvDtype string) (KVModel, error) {
	if tp <= 0 {
		tp = 1
	}
	k := KVModel{TP: tp}
	switch strings.ToLower(strings.TrimSpace(kvDtype)) {
	case "", "auto":
		k.Dtype = c.Dtype
		if k.Dtype == "" {
			k.Dtype = "bf16"
		}
	default:
		d, err := NormalizeDtype(kvDtype)
		if err != nil {
			return KVModel{}, fmt.Errorf("KV dtype: %w", err)
		}
		k.Dtype = d
	}
	k.DtypeBytes = dtypeBytes(k.Dtype)
	for _, kind := range c.Kinds {
		switch kind {
		case LayerFull:
			k.FullLayers++
		case LayerSliding:
			k.SlidingLayers++
		case LayerState:
			k.StateLayers++
		}
	}
	attnLayers := k.FullLayers + k.SlidingLayers
	var perLayer int64 // bytes per token per attention layer per GPU
	if attnLayers > 0 {
		switch {
		case c.KVLoraRank > 0:
			// MLA caches the latent and the RoPE key once per token, for all heads; it is
			// replicated on every TP rank (only decode context parallelism splits it).
			if c.QKRopeHeadDim <= 0 {
				return KVModel{}, missing("qk_rope_head_dim", "MLA models cache kv_lora_rank + qk_rope_head_dim per token")
			}
			k.Kind = "mla"
			perLayer = int64(c.KVLoraRank+c.QKRopeHeadDim) * k.DtypeBytes
			k.Derivation = append(k.Derivation, fmt.Sprintf(
				"MLA: %d layers × (kv_lora_rank %d + qk_rope_head_dim %d) × %d bytes (%s), replicated on each of %d TP ranks",
				attnLayers, c.KVLoraRank, c.QKRopeHeadDim, k.DtypeBytes, k.Dtype, tp))
		default:
			if c.KVHeads <= 0 {
				return KVModel{}, missing("num_key_value_heads", "or num_attention_heads: the KV heads per layer")
			}
			if c.HeadDim <= 0 {
				return KVModel{}, missing("head_dim", "or hidden_size and num_attention_heads")
			}
			k.Kind = "gqa"
			if c.KVHeads == c.Heads {
				k.Kind = "mha"
			}
			// Each rank holds its share of the KV heads; with more ranks than KV heads
			// every rank keeps (a replica of) one head.
			heads := max(1, (c.KVHeads+tp-1)/tp)
			perLayer = 2 * int64(heads) * int64(c.HeadDim) * k.DtypeBytes
			k.Derivation = append(k.Derivation, fmt.Sprintf(
				"%s: 2 (K,V) × %d layers × max(1, ceil(%d KV heads / TP %d)) = %d per rank × head_dim %d × %d bytes (%s)",
				strings.ToUpper(k.Kind), attnLayers, c.KVHeads, tp, heads, c.HeadDim, k.DtypeBytes, k.Dtype))
		}
	}
	k.FullBytesPerToken = int64(k.FullLayers) * perLayer
	k.SlidingBytesPerToken = int64(k.SlidingLayers) * perLayer
	if k.SlidingLayers > 0 {
		if c.SlidingWindow <= 0 {
			return KVModel{}, missing("sliding_window", "the window of the sliding-attention layers")
		}
		k.Window = c.SlidingWindow
		k.Derivation = append(k.Derivation, fmt.Sprintf(
			"%d of %d attention layers slide over %d tokens: they hold at most %d tokens per request",
			k.SlidingLayers, attnLayers, k.Window, k.Window))
	}
	if k.StateLayers > 0 {
		shard := (c.stateElems + int64(tp) - 1) / int64(tp)
		k.StateBytesPerRequest = int64(k.StateLayers) * shard * k.DtypeBytes
		k.Derivation = append(k.Derivation, fmt.Sprintf(
			"%d linear-attention/Mamba layers keep a constant state: %s = %d elements / TP %d × %d bytes = %d bytes per request",
			k.StateLayers, c.stateFields, c.stateElems, tp, k.DtypeBytes, k.StateBytesPerRequest))
		if k.Kind == "" {
			k.Kind = "state"
		}
	}
	return k, nil
}
