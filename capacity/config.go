package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
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

// maxConfigBytes bounds the size of a config.json: published ones are a few KB (with
// every layer spelled out, tens of KB), and the whole file is read into memory.
const maxConfigBytes = 16 << 20

// LoadModelConfig reads a Hugging Face config.json.
func LoadModelConfig(path string) (*ModelConfig, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseModelConfig(data)
	if err != nil {
		return nil, fmt.Errorf("model config %s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// readConfigFile reads path if it is a regular file of at most maxConfigBytes: a
// FIFO would block forever and a device might never end.
func readConfigFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading model config: %w", err)
	}
	if !st.Mode().IsRegular() {
		kind := "mode " + st.Mode().String()
		if st.Mode()&os.ModeNamedPipe != 0 {
			kind = "a named pipe"
		}
		return nil, fmt.Errorf("reading model config %s: not a regular file (%s)", path, kind)
	}
	if st.Size() > maxConfigBytes {
		return nil, fmt.Errorf("reading model config %s: %d bytes, larger than any config.json (at most %d MiB)", path, st.Size(), maxConfigBytes>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading model config: %w", err)
	}
	defer f.Close()
	// The file may have grown since Stat.
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading model config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("reading model config %s: larger than any config.json (at most %d MiB)", path, maxConfigBytes>>20)
	}
	return data, nil
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

	f := fields{m: m}
	var ok bool
	if c.Layers, ok = f.size(1, maxLayers, "num_hidden_layers", "n_layer", "num_layers"); !ok && f.err == nil {
		return nil, missing("num_hidden_layers", "the number of layers")
	}
	c.Hidden, _ = f.size(0, maxHidden, "hidden_size", "d_model", "n_embd")
	c.Heads, _ = f.size(0, maxHeads, "num_attention_heads", "n_head")
	c.KVHeads, ok = f.size(0, maxHeads, "num_key_value_heads")
	if !ok || c.KVHeads <= 0 {
		c.KVHeads = c.Heads // no num_key_value_heads: multi-head attention
	}
	c.HeadDim, _ = f.size(0, maxHeadDim, "head_dim")
	if c.HeadDim <= 0 && c.Hidden > 0 && c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	c.KVLoraRank, _ = f.size(0, maxHeadDim, "kv_lora_rank")
	c.QKRopeHeadDim, _ = f.size(0, maxHeadDim, "qk_rope_head_dim")
	c.QLoraRank, _ = f.size(0, maxHeadDim, "q_lora_rank")
	c.QKNopeHeadDim, _ = f.size(0, maxHeadDim, "qk_nope_head_dim")
	c.VHeadDim, _ = f.size(0, maxHeadDim, "v_head_dim")
	c.SlidingWindow, _ = f.size64(0, MaxContextTokens, "sliding_window")
	c.MaxModelLen, _ = f.size64(0, MaxContextTokens, "max_position_embeddings", "n_positions", "max_sequence_length")
	c.Vocab, _ = f.size(0, maxVocab, "vocab_size")
	c.Intermediate, _ = f.size(0, maxIntermediate, "intermediate_size")
	if t, ok := m["tie_word_embeddings"].(bool); ok {
		c.TieEmbeddings = t
	}
	c.Experts, _ = f.size(0, maxExperts, "n_routed_experts", "num_local_experts", "num_experts")
	c.ExpertIntermediate, _ = f.size(0, maxIntermediate, "moe_intermediate_size")
	if c.ExpertIntermediate == 0 && c.Experts > 0 {
		c.ExpertIntermediate = c.Intermediate // Mixtral and gpt-oss size experts this way
	}
	c.SharedExperts, _ = f.size(0, maxExperts, "n_shared_experts")
	c.ExpertsPerToken, _ = f.size(0, maxExperts, "num_experts_per_tok", "num_experts_per_token", "moe_topk", "experts_per_token")
	c.DenseLayers, _ = f.size(0, maxLayers, "first_k_dense_replace")
	c.MoELayerFreq, _ = f.size(0, maxLayers, "moe_layer_freq")
	if f.err != nil {
		return nil, f.err
	}
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

// Plausible maxima of the sizes a config.json gives: each is far above any published
// model (the deepest have about 200 layers, the widest a hidden size of about 30,000,
// the most experts 384, the largest vocabulary about 262,000), and low enough that no
// product the capacity model forms overflows int64 or allocates more than a few MB.
// A value beyond them is a broken or hostile file, refused naming the field.
const (
	maxLayers       = 4096
	maxHidden       = 1 << 17
	maxHeads        = 4096
	maxHeadDim      = 4096
	maxVocab        = 1 << 24
	maxIntermediate = 1 << 18
	maxExperts      = 4096
	maxStateSize    = 1 << 16 // SSM state size, conv kernel, expand factor

	// MaxContextTokens bounds every length in tokens: context lengths, sliding
	// windows and request lengths (about 4.3 billion; the longest contexts are 10
	// million).
	MaxContextTokens = 1 << 32
)

// fields reads whole-number sizes from a config's map, keeping the first error: a
// value that is present but not a plausible whole number is an error naming the
// field and what is wrong with it, never taken for a missing field.
type fields struct {
	m   map[string]any
	err error
}

// size returns the first of keys present with a non-null value, checked to be a whole
// number in [lo, hi]; ok is false when none is present or after an error.
func (f *fields) size(lo, hi int, keys ...string) (int, bool) {
	n, ok := f.size64(int64(lo), int64(hi), keys...)
	return int(n), ok
}

// size64 is size for sizes that may exceed a 32-bit int (lengths in tokens).
func (f *fields) size64(lo, hi int64, keys ...string) (int64, bool) {
	if f.err != nil {
		return 0, false
	}
	for _, k := range keys {
		v, present := f.m[k]
		if !present || v == nil {
			continue
		}
		n, err := wholeNumber(k, v, lo, hi)
		if err != nil {
			f.err = err
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// wholeNumber checks one JSON value of field k.
func wholeNumber(k string, v any, lo, hi int64) (int64, error) {
	var x float64
	switch t := v.(type) {
	case float64:
		x = t
	case string:
		return 0, fmt.Errorf("field %q is %q (a string), want a whole number", k, t)
	case bool:
		return 0, fmt.Errorf("field %q is %v (a boolean), want a whole number", k, t)
	case []any:
		return 0, fmt.Errorf("field %q is a list, want a whole number", k)
	default:
		return 0, fmt.Errorf("field %q is an object, want a whole number", k)
	}
	switch {
	case x != math.Trunc(x):
		return 0, fmt.Errorf("field %q is %g, want a whole number", k, x)
	case x < float64(lo):
		return 0, fmt.Errorf("field %q is %g, want a whole number of at least %d", k, x, lo)
	case x > float64(hi):
		return 0, fmt.Errorf("field %q is %g, more than any plausible model (at most %d)", k, x, hi)
	}
	return int64(x), nil
}
