package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
)

// The capacity model: how many KV-cache tokens a deployment holds, from a Hugging Face
// config.json and the GPU catalog, and how many requests of a given length that is.

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
// figure your server logs with --reserve-gib when you have it.
const DefaultReserveGiB = 1.0

// LayerKind is what one decoder layer keeps per request.
type LayerKind int

// Layer kinds: full attention grows with the sequence, sliding attention grows up to its
// window, linear attention and state-space layers keep a constant state, and the plain
// MLP/MoE blocks of some hybrid patterns keep nothing.
const (
	LayerFull LayerKind = iota
	LayerSliding
	LayerState
	LayerNone
)

// ModelConfig is the part of a Hugging Face config.json the capacity model reads. For
// multimodal configs the nested text_config is read, with top-level fields (dtype,
// quantization) filling in what it lacks.
type ModelConfig struct {
	Path      string
	ModelType string

	Layers  int
	Hidden  int
	Heads   int
	KVHeads int
	HeadDim int

	// MLA (DeepSeek-V2/V3, Kimi-K2): the cache holds the compressed latent and the
	// decoupled RoPE key, shared by all heads.
	KVLoraRank    int
	QKRopeHeadDim int
	QLoraRank     int
	QKNopeHeadDim int
	VHeadDim      int

	SlidingWindow int64
	Kinds         []LayerKind // one per layer

	Dtype       string // normalized torch_dtype ("bf16", "fp16", "fp32"), "" when absent
	MaxModelLen int64  // max_position_embeddings

	Vocab         int
	Intermediate  int
	TieEmbeddings bool

	// Mixture of experts.
	Experts            int
	ExpertIntermediate int
	SharedExperts      int
	DenseLayers        int // leading dense layers (first_k_dense_replace)
	MoELayerFreq       int

	QuantMethod string // quantization_config.quant_method, lower case

	// Constant per-request state of one linear-attention / state-space layer, in
	// elements before tensor-parallel sharding (every term shards by heads or channels).
	stateElems  int64
	stateFields string // the formula, for the derivation text

	raw map[string]any
}

// LoadModelConfig reads a Hugging Face config.json.
func LoadModelConfig(path string) (*ModelConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading model config: %w", err)
	}
	cfg, err := ParseModelConfig(data)
	if err != nil {
		return nil, fmt.Errorf("model config %s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// ParseModelConfig parses the bytes of a config.json.
func ParseModelConfig(data []byte) (*ModelConfig, error) {
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	m := top
	if tc, ok := top["text_config"].(map[string]any); ok {
		// The text model's own fields win; the wrapper's fill the gaps (Kimi-K2.5
		// keeps quantization_config at the top level, some keep torch_dtype there).
		m = make(map[string]any, len(tc)+len(top))
		for k, v := range top {
			if k != "text_config" && k != "vision_config" {
				m[k] = v
			}
		}
		for k, v := range tc {
			m[k] = v
		}
	}
	c := &ModelConfig{raw: m}
	c.ModelType, _ = m["model_type"].(string)

	var ok bool
	if c.Layers, ok = intField(m, "num_hidden_layers", "n_layer", "num_layers"); !ok || c.Layers <= 0 {
		return nil, missing("num_hidden_layers", "the number of layers")
	}
	c.Hidden, _ = intField(m, "hidden_size", "d_model", "n_embd")
	c.Heads, _ = intField(m, "num_attention_heads", "n_head")
	c.KVHeads, ok = intField(m, "num_key_value_heads")
	if !ok || c.KVHeads <= 0 {
		c.KVHeads = c.Heads // no num_key_value_heads: multi-head attention
	}
	c.HeadDim, _ = intField(m, "head_dim")
	if c.HeadDim <= 0 && c.Hidden > 0 && c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	c.KVLoraRank, _ = intField(m, "kv_lora_rank")
	c.QKRopeHeadDim, _ = intField(m, "qk_rope_head_dim")
	c.QLoraRank, _ = intField(m, "q_lora_rank")
	c.QKNopeHeadDim, _ = intField(m, "qk_nope_head_dim")
	c.VHeadDim, _ = intField(m, "v_head_dim")
	if w, ok := intField(m, "sliding_window"); ok {
		c.SlidingWindow = int64(w)
	}
	if n, ok := intField(m, "max_position_embeddings", "n_positions", "max_sequence_length"); ok {
		c.MaxModelLen = int64(n)
	}
	c.Vocab, _ = intField(m, "vocab_size")
	c.Intermediate, _ = intField(m, "intermediate_size")
	if t, ok := m["tie_word_embeddings"].(bool); ok {
		c.TieEmbeddings = t
	}
	c.Experts, _ = intField(m, "n_routed_experts", "num_local_experts", "num_experts")
	c.ExpertIntermediate, _ = intField(m, "moe_intermediate_size")
	if c.ExpertIntermediate == 0 && c.Experts > 0 {
		c.ExpertIntermediate = c.Intermediate // Mixtral and gpt-oss size experts this way
	}
	c.SharedExperts, _ = intField(m, "n_shared_experts")
	c.DenseLayers, _ = intField(m, "first_k_dense_replace")
	c.MoELayerFreq, _ = intField(m, "moe_layer_freq")
	if q, ok := m["quantization_config"].(map[string]any); ok {
		if s, ok := q["quant_method"].(string); ok {
			c.QuantMethod = strings.ToLower(s)
		}
	}
	for _, k := range []string{"torch_dtype", "dtype"} {
		if s, ok := m[k].(string); ok {
			if d, err := normalizeDtype(s); err == nil {
				c.Dtype = d
				break
			}
		}
	}
	if err := c.classifyLayers(); err != nil {
		return nil, err
	}
	return c, nil
}

func missing(field, what string) error {
	return fmt.Errorf("missing field %q (%s)", field, what)
}

// intField returns the first of keys that holds a number.
func intField(m map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		if f, ok := m[k].(float64); ok {
			return int(f), true
		}
	}
	return 0, false
}

// classifyLayers decides what each layer keeps per request.
func (c *ModelConfig) classifyLayers() error {
	m := c.raw
	c.Kinds = make([]LayerKind, c.Layers)
	stateLayers := false
	switch {
	case m["layer_types"] != nil:
		// gpt-oss, Gemma 3, Qwen3-Next, LFM2 and newer transformers configs spell out
		// every layer.
		lt, ok := m["layer_types"].([]any)
		if !ok || len(lt) != c.Layers {
			return fmt.Errorf("field \"layer_types\" must list one type per layer (%d)", c.Layers)
		}
		for i, v := range lt {
			s, _ := v.(string)
			switch {
			case strings.Contains(s, "sliding"), strings.Contains(s, "chunked"), strings.Contains(s, "local"):
				c.Kinds[i] = LayerSliding
			case strings.Contains(s, "linear"), strings.Contains(s, "mamba"), strings.Contains(s, "conv"),
				strings.Contains(s, "recurrent"), strings.Contains(s, "ssm"):
				c.Kinds[i] = LayerState
				stateLayers = true
			default:
				c.Kinds[i] = LayerFull
			}
		}
	case m["hybrid_override_pattern"] != nil:
		// Nemotron-H: "M" Mamba-2, "*" attention, "-" MLP, "E" MoE.
		p, _ := m["hybrid_override_pattern"].(string)
		if len(p) != c.Layers {
			return fmt.Errorf("field \"hybrid_override_pattern\" has %d entries for %d layers", len(p), c.Layers)
		}
		for i, ch := range p {
			switch ch {
			case 'M':
				c.Kinds[i] = LayerState
				stateLayers = true
			case '*':
				c.Kinds[i] = LayerFull
			default:
				c.Kinds[i] = LayerNone
			}
		}
	case m["attn_layer_period"] != nil:
		// Jamba: one attention layer every period, at offset; Mamba elsewhere.
		period, _ := intField(m, "attn_layer_period")
		offset, _ := intField(m, "attn_layer_offset")
		if period <= 0 {
			return fmt.Errorf("field \"attn_layer_period\" must be positive")
		}
		for i := range c.Kinds {
			if i%period == offset {
				c.Kinds[i] = LayerFull
			} else {
				c.Kinds[i] = LayerState
				stateLayers = true
			}
		}
	case c.ModelType == "mamba" || c.ModelType == "mamba2" || c.ModelType == "falcon_mamba":
		for i := range c.Kinds {
			c.Kinds[i] = LayerState
		}
		stateLayers = true
	case m["sliding_window_pattern"] != nil && c.SlidingWindow > 0:
		// Gemma 3 before layer_types: every pattern-th layer is global.
		p, _ := intField(m, "sliding_window_pattern")
		if p <= 0 {
			return fmt.Errorf("field \"sliding_window_pattern\" must be positive")
		}
		for i := range c.Kinds {
			if (i+1)%p != 0 {
				c.Kinds[i] = LayerSliding
			}
		}
	case c.ModelType == "gemma2" && c.SlidingWindow > 0:
		// Gemma 2 alternates, starting with a sliding layer.
		for i := range c.Kinds {
			if i%2 == 0 {
				c.Kinds[i] = LayerSliding
			}
		}
	case c.SlidingWindow > 0 && slidingEverywhere(c.ModelType, m):
		for i := range c.Kinds {
			c.Kinds[i] = LayerSliding
		}
	}
	if stateLayers {
		return c.stateSize()
	}
	return nil
}

// slidingEverywhere says whether a bare sliding_window applies to every layer. Qwen2/3
// configs carry sliding_window with use_sliding_window false, so only an explicit true,
// or Mistral-family models that always used it, count.
func slidingEverywhere(modelType string, m map[string]any) bool {
	if use, ok := m["use_sliding_window"].(bool); ok {
		return use
	}
	return modelType == "mistral" || modelType == "mixtral"
}

// stateSize estimates the constant per-request state of one linear-attention or
// state-space layer, in elements, before tensor-parallel sharding (every term shards by
// heads or channels).
func (c *ModelConfig) stateSize() error {
	m := c.raw
	get := func(keys ...string) (int64, error) {
		v, ok := intField(m, keys...)
		if !ok || v <= 0 {
			return 0, missing(keys[0], "needed for the state of linear-attention/Mamba layers")
		}
		return int64(v), nil
	}
	switch {
	case m["linear_num_value_heads"] != nil:
		// Gated DeltaNet (Qwen3-Next): a d_k×d_v matrix per value head, plus the
		// causal-convolution window over q, k and v.
		hk, err := get("linear_num_key_heads")
		if err != nil {
			return err
		}
		hv, _ := get("linear_num_value_heads")
		dk, err := get("linear_key_head_dim")
		if err != nil {
			return err
		}
		dv, err := get("linear_value_head_dim")
		if err != nil {
			return err
		}
		k, err := get("linear_conv_kernel_dim")
		if err != nil {
			return err
		}
		c.stateElems = hv*dk*dv + (k-1)*(2*hk*dk+hv*dv)
		c.stateFields = "H_v·d_k·d_v + (conv−1)·(2·H_k·d_k + H_v·d_v)"
	case m["mamba_num_heads"] != nil || m["mamba_n_heads"] != nil || m["mamba_head_dim"] != nil || m["mamba_d_head"] != nil:
		// Mamba-2 (Nemotron-H, Falcon-H1, Bamba): an SSM state per head plus the conv window.
		nh, err := get("mamba_num_heads", "mamba_n_heads")
		if err != nil {
			return err
		}
		hd, err := get("mamba_head_dim", "mamba_d_head")
		if err != nil {
			return err
		}
		ds, err := get("ssm_state_size", "mamba_d_state", "state_size")
		if err != nil {
			return err
		}
		g, err := get("n_groups", "mamba_n_groups")
		if err != nil {
			g = 1
		}
		k, err := get("conv_kernel", "mamba_d_conv", "mamba_conv_kernel")
		if err != nil {
			return err
		}
		c.stateElems = nh*hd*ds + (k-1)*(nh*hd+2*g*ds)
		c.stateFields = "H·d_head·d_state + (conv−1)·(H·d_head + 2·groups·d_state)"
	default:
		// Mamba-1 (Mamba, Jamba): d_inner channels of d_state each, plus the conv window.
		ds, err := get("state_size", "mamba_d_state", "ssm_state_size")
		if err != nil {
			return err
		}
		k, err := get("conv_kernel", "mamba_d_conv")
		if err != nil {
			return err
		}
		var inner int64
		if e, ok := intField(m, "mamba_expand", "expand"); ok && c.Hidden > 0 {
			inner = int64(e * c.Hidden)
		} else if c.ModelType == "mamba" || c.ModelType == "falcon_mamba" {
			inner, err = get("intermediate_size")
			if err != nil {
				return err
			}
		} else {
			return missing("mamba_expand", "needed for the state of Mamba layers")
		}
		c.stateElems = inner*ds + (k-1)*inner
		c.stateFields = "d_inner·d_state + (conv−1)·d_inner"
	}
	return nil
}

// normalizeDtype maps the spellings of a dtype to "fp32", "bf16", "fp16" or "fp8".
func normalizeDtype(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bf16", "bfloat16", "torch.bfloat16":
		return "bf16", nil
	case "fp16", "float16", "half", "torch.float16":
		return "fp16", nil
	case "fp32", "float32", "float", "torch.float32":
		return "fp32", nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fn", "float8_e4m3fn", "float8", "int8":
		return "fp8", nil
	}
	return "", fmt.Errorf("unknown dtype %q (want auto, bf16, fp16, fp8 or fp32)", s)
}

func dtypeBytes(d string) int64 {
	switch d {
	case "fp32":
		return 4
	case "fp8":
		return 1
	}
	return 2
}

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
		d, err := normalizeDtype(kvDtype)
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

// ParamCount estimates the parameters of a decoder from its config: embeddings, the
// attention projections (GQA or MLA), dense MLPs and experts. Norms and biases are
// left out (well under 0.1%). experts is the part held in routed experts, which
// quantized checkpoints usually store in fewer bits than the rest.
func ParamCount(c *ModelConfig) (total, experts int64, err error) {
	if c.Hidden <= 0 {
		return 0, 0, missing("hidden_size", "needed to estimate the parameter count; or give --weights-gib")
	}
	if c.Vocab <= 0 {
		return 0, 0, missing("vocab_size", "needed to estimate the parameter count; or give --weights-gib")
	}
	h := int64(c.Hidden)
	emb := int64(c.Vocab) * h
	if !c.TieEmbeddings {
		emb *= 2
	}
	var attn int64
	switch {
	case c.KVLoraRank > 0:
		nh := int64(c.Heads)
		qk := int64(c.QKNopeHeadDim + c.QKRopeHeadDim)
		if c.QLoraRank > 0 {
			attn += h*int64(c.QLoraRank) + int64(c.QLoraRank)*nh*qk
		} else {
			attn += h * nh * qk
		}
		attn += h * int64(c.KVLoraRank+c.QKRopeHeadDim)
		attn += int64(c.KVLoraRank) * nh * int64(c.QKNopeHeadDim+c.VHeadDim)
		attn += nh * int64(c.VHeadDim) * h
	default:
		if c.Heads <= 0 || c.HeadDim <= 0 {
			return 0, 0, missing("num_attention_heads", "needed to estimate the parameter count; or give --weights-gib")
		}
		attn = h*int64(c.Heads*c.HeadDim)*2 + 2*h*int64(c.KVHeads*c.HeadDim)
	}
	if c.Intermediate <= 0 && c.Experts == 0 {
		return 0, 0, missing("intermediate_size", "needed to estimate the parameter count; or give --weights-gib")
	}
	dense := 3 * h * int64(c.Intermediate)
	var moeExperts, moeShared int64
	if c.Experts > 0 {
		moeExperts = int64(c.Experts) * 3 * h * int64(c.ExpertIntermediate)
		moeShared = int64(c.SharedExperts)*3*h*int64(c.ExpertIntermediate) + h*int64(c.Experts)
	}
	total = emb
	for i, kind := range c.Kinds {
		if kind == LayerState {
			return 0, 0, fmt.Errorf("cannot estimate the parameters of linear-attention/Mamba layers; give --weights-gib")
		}
		if kind != LayerNone {
			total += attn
		}
		freq := max(1, c.MoELayerFreq)
		if c.Experts > 0 && i >= c.DenseLayers && i%freq == 0 {
			total += moeExperts + moeShared
			experts += moeExperts
		} else {
			total += dense
		}
	}
	return total, experts, nil
}

// WeightBytes estimates the weight memory of the whole model. weightDtype overrides
// the checkpoint's precision ("bf16", "fp8", "fp4", "int4"); otherwise the
// quantization_config decides: fp8 stores everything in one byte, the 4-bit formats
// (MXFP4, NVFP4, INT4 with group scales, about 4.25-4.5 bits) usually only the experts
// of an MoE (all linear layers of a dense model). paramsB overrides the count.
func WeightBytes(c *ModelConfig, weightDtype string, paramsB float64) (bytes int64, how string, err error) {
	var total, experts int64
	if paramsB > 0 {
		total = int64(paramsB * 1e9)
	} else {
		total, experts, err = ParamCount(c)
		if err != nil {
			return 0, "", err
		}
	}
	native := 2.0
	if c.Dtype == "fp32" {
		native = 4
	}
	rest, exp := native, native
	label := c.Dtype
	if label == "" {
		label = "bf16"
	}
	// 4-bit formats carry scales: MXFP4 one 8-bit scale per 32 values (4.25 bits),
	// NVFP4 one FP8 scale per 16 and INT4 one 16-bit scale per 32 (4.5 bits).
	fourBit := 4.5 / 8
	switch strings.ToLower(weightDtype) {
	case "":
		switch {
		case c.QuantMethod == "fp8":
			rest, exp, label = 1, 1, "fp8"
		case c.QuantMethod == "":
		default: // mxfp4, modelopt (NVFP4), compressed-tensors, awq, gptq: 4-bit
			bits := 4.5
			if c.QuantMethod == "mxfp4" {
				bits = 4.25
			}
			exp = bits / 8
			label = fmt.Sprintf("%s (≈%g bits) experts, %s rest", c.QuantMethod, bits, label)
			if experts == 0 {
				rest, label = exp, fmt.Sprintf("%s (≈%g bits)", c.QuantMethod, bits)
			}
		}
	case "bf16", "fp16", "bfloat16", "float16":
		rest, exp, label = 2, 2, weightDtype
	case "fp32", "float32":
		rest, exp, label = 4, 4, weightDtype
	case "fp8", "int8":
		rest, exp, label = 1, 1, weightDtype
	case "fp4", "nvfp4", "mxfp4", "int4":
		rest, exp, label = fourBit, fourBit, weightDtype+" (≈4.5 bits with scales)"
	default:
		return 0, "", fmt.Errorf("unknown weight dtype %q (want bf16, fp16, fp8, int8, fp4, int4)", weightDtype)
	}
	bytes = int64(float64(total-experts)*rest + float64(experts)*exp)
	how = fmt.Sprintf("%.1fB parameters in %s", float64(total)/1e9, label)
	return bytes, how, nil
}

// BudgetInput describes the hardware side of the capacity model.
type BudgetInput struct {
	GPU         string  // catalog name ("" with MemoryGiB > 0 for an uncatalogued GPU)
	MemoryGiB   float64 // overrides the catalog's memory per GPU when > 0
	Utilization float64 // 0 = DefaultUtilization
	WeightsGiB  float64 // weights per GPU; 0 = estimate from the config
	ReserveGiB  float64 // < 0 = DefaultReserveGiB
	GPUs, TP    int
	KVDtype     string
	WeightDtype string
	ParamsB     float64
}

// PlanResult is the capacity model worked out step by step.
type PlanResult struct {
	Config     *ModelConfig
	KV         KVModel
	GPU        *GPU // nil for an uncatalogued GPU given by memory only
	Budget     Budget
	WeightsHow string // "given" or how they were estimated
	Replicas   int    // GPUs / TP, serving engines that each hold a full KV cache
	// KVTokens is the KV capacity of one replica in tokens (budget / bytes per token).
	KVTokens int64
}

// PlanBudget works out the memory budget per GPU and the KV capacity:
// memory × utilization − weights per GPU − reserve, divided by the KV bytes per token.
func PlanBudget(c *ModelConfig, in BudgetInput) (*PlanResult, error) {
	if in.TP <= 0 {
		in.TP = 1
	}
	if in.GPUs <= 0 {
		in.GPUs = in.TP
	}
	if in.GPUs%in.TP != 0 {
		return nil, fmt.Errorf("--gpus %d is not a multiple of --tp %d", in.GPUs, in.TP)
	}
	if in.Utilization == 0 {
		in.Utilization = DefaultUtilization
	}
	if in.Utilization < 0 || in.Utilization > 1 {
		return nil, fmt.Errorf("GPU utilization %g must be in (0, 1]", in.Utilization)
	}
	if in.ReserveGiB < 0 {
		in.ReserveGiB = DefaultReserveGiB
	}
	kv, err := NewKVModel(c, in.TP, in.KVDtype)
	if err != nil {
		return nil, err
	}
	p := &PlanResult{Config: c, KV: kv, Replicas: in.GPUs / in.TP}
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
		return nil, fmt.Errorf("no GPU memory: give --gpu NAME or --gpu-memory-gib")
	}
	var weights int64
	if in.WeightsGiB > 0 {
		weights = int64(in.WeightsGiB * float64(gib))
		p.WeightsHow = "given"
	} else {
		total, how, err := WeightBytes(c, in.WeightDtype, in.ParamsB)
		if err != nil {
			return nil, err
		}
		weights = total / int64(in.TP)
		p.WeightsHow = fmt.Sprintf("estimated: %s / TP %d", how, in.TP)
	}
	capped := int64(float64(mem) * in.Utilization)
	reserve := int64(in.ReserveGiB * float64(gib))
	p.Budget = Budget{
		GPU:           name,
		GPUs:          in.GPUs,
		TP:            in.TP,
		MemoryBytes:   mem,
		Utilization:   in.Utilization,
		WeightsBytes:  weights,
		ReserveBytes:  reserve,
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
// hold at once, all replicas together. It uses the exact per-request footprint (sliding
// windows capped, constant states added), not just tokens / capacity.
func (p *PlanResult) Concurrency(tokens float64) float64 {
	if tokens <= 0 {
		return math.NaN()
	}
	per := p.KV.RequestBytes(tokens)
	if per <= 0 {
		return math.Inf(1)
	}
	return float64(p.Replicas) * float64(p.Budget.KVBudgetBytes) / per
}

// ConcurrencyAt is the concurrency a KV cache of capacityTokens holds at requests of
// tokens each: what vLLM logs as "Maximum concurrency for N tokens per request".
func ConcurrencyAt(capacityTokens int64, tokens float64) float64 {
	if tokens <= 0 {
		return math.NaN()
	}
	return float64(capacityTokens) / tokens
}

// ProposeLevels proposes closed-loop sweep levels that bracket a predicted ceiling:
// doublings from 1 up to about twice the ceiling, with the half-steps (×1.5) added
// between half and twice the ceiling where the resolution matters. Never 1024 by habit:
// the sweep stops where the prediction says it stops paying.
func ProposeLevels(ceiling float64) []int {
	if math.IsNaN(ceiling) || ceiling < 1 {
		return []int{1}
	}
	top := 2 * ceiling
	var levels []int
	for l := 1; float64(l) <= top*1.01; l *= 2 {
		levels = append(levels, l)
		half := l + l/2
		if l >= 2 && float64(half) >= ceiling/2 && float64(half) <= top*1.01 {
			levels = append(levels, half)
		}
	}
	// Reach about twice the ceiling when the last doubling fell well short of it.
	if last := levels[len(levels)-1]; float64(last) < top/1.3 {
		levels = append(levels, int(math.Round(top)))
	}
	return levels
}
