package capacity

import (
	"fmt"
	"strings"
)

// classifyLayers decides what each layer keeps per request.
func (c *ModelConfig) classifyLayers() error {
	m := c.raw
	f := fields{m: m}
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
		period, _ := f.size(0, maxLayers, "attn_layer_period")
		offset, _ := f.size(0, maxLayers, "attn_layer_offset")
		if f.err != nil {
			return f.err
		}
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
		p, _ := f.size(0, maxLayers, "sliding_window_pattern")
		if f.err != nil {
			return f.err
		}
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
	f := fields{m: m}
	get := func(keys ...string) (int64, error) {
		hi := maxHeadDim // heads and head dimensions
		switch keys[0] {
		case "ssm_state_size", "state_size", "mamba_d_state", "conv_kernel", "mamba_d_conv", "linear_conv_kernel_dim":
			hi = maxStateSize
		case "intermediate_size":
			hi = maxIntermediate
		}
		v, ok := f.size(0, hi, keys...)
		if f.err != nil {
			return 0, f.err
		}
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
		e, ok := f.size(0, maxStateSize, "mamba_expand", "expand")
		if f.err != nil {
			return f.err
		}
		if ok && c.Hidden > 0 {
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
