package capacity

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

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
	ExpertsPerToken    int // routed experts each token goes to (num_experts_per_tok)
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
	c.ExpertsPerToken, _ = intField(m, "num_experts_per_tok", "num_experts_per_token", "moe_topk", "experts_per_token")
	c.DenseLayers, _ = intField(m, "first_k_dense_replace")
	c.MoELayerFreq, _ = intField(m, "moe_layer_freq")
	if q, ok := m["quantization_config"].(map[string]any); ok {
		if s, ok := q["quant_method"].(string); ok {
			c.QuantMethod = strings.ToLower(s)
		}
	}
	for _, k := range []string{"torch_dtype", "dtype"} {
		if s, ok := m[k].(string); ok {
			if d, err := NormalizeDtype(s); err == nil {
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
