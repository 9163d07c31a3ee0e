package capacity

import (
	"strings"
	"testing"
)

func TestGemmaPatternsAndNesting(t *testing.T) {
	// Gemma 3 style: nested text_config, sliding_window_pattern 6 (every 6th global).
	cfg := `{"model_type":"gemma3","torch_dtype":"bfloat16","text_config":{"model_type":"gemma3_text",
	 "num_hidden_layers":12,"num_attention_heads":8,"num_key_value_heads":4,"head_dim":256,
	 "hidden_size":2560,"sliding_window":1024,"sliding_window_pattern":6}}`
	c, err := ParseModelConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKVModel(c, 1, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if k.FullLayers != 2 || k.SlidingLayers != 10 || k.Window != 1024 || k.Dtype != "bf16" {
		t.Fatalf("gemma3: %+v", k)
	}
	// Gemma 2: alternating, sliding first.
	c, err = ParseModelConfig([]byte(`{"model_type":"gemma2","num_hidden_layers":4,"num_attention_heads":8,
	 "num_key_value_heads":4,"head_dim":256,"hidden_size":2304,"sliding_window":4096}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kinds[0] != LayerSliding || c.Kinds[1] != LayerFull {
		t.Errorf("gemma2 kinds %v", c.Kinds)
	}
	// Qwen-style sliding_window with use_sliding_window false does not slide.
	c = loadSample(t, "qwen3-32b.json")
	for _, kind := range c.Kinds {
		if kind != LayerFull {
			t.Fatalf("qwen3 kinds %v", c.Kinds)
		}
	}
	// MHA: no num_key_value_heads, no head_dim; fp32 default dtype.
	c, err = ParseModelConfig([]byte(`{"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":64,"torch_dtype":"float32"}`))
	if err != nil {
		t.Fatal(err)
	}
	k, err = NewKVModel(c, 1, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if k.Kind != "mha" || k.BytesPerToken() != 2*2*4*16*4 {
		t.Errorf("mha: %s %d", k.Kind, k.BytesPerToken())
	}
}

func TestLinearAttentionState(t *testing.T) {
	// Qwen3-Next style: 3 of 4 layers Gated DeltaNet.
	cfg := `{"model_type":"qwen3_next","num_hidden_layers":4,"num_attention_heads":16,"num_key_value_heads":2,
	 "head_dim":256,"hidden_size":2048,"torch_dtype":"bfloat16",
	 "layer_types":["linear_attention","linear_attention","linear_attention","full_attention"],
	 "linear_num_key_heads":16,"linear_num_value_heads":32,"linear_key_head_dim":128,
	 "linear_value_head_dim":128,"linear_conv_kernel_dim":4}`
	c, err := ParseModelConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKVModel(c, 2, "auto")
	if err != nil {
		t.Fatal(err)
	}
	elems := int64(32*128*128 + 3*(2*16*128+32*128))
	if k.StateLayers != 3 || k.StateBytesPerRequest != 3*elems/2*2 {
		t.Errorf("state layers %d bytes %d, want 3 and %d", k.StateLayers, k.StateBytesPerRequest, 3*elems/2*2)
	}
	if k.FullBytesPerToken != 2*1*256*2 {
		t.Errorf("full bytes/token %d", k.FullBytesPerToken)
	}
	if got, want := k.RequestBytes(1000), float64(1000*k.FullBytesPerToken+k.StateBytesPerRequest); got != want {
		t.Errorf("request bytes %v, want %v", got, want)
	}
	// Nemotron-H style pattern with a missing Mamba field names the field.
	_, err = ParseModelConfig([]byte(`{"num_hidden_layers":3,"hybrid_override_pattern":"M*-","mamba_num_heads":8,
	 "mamba_head_dim":64,"n_groups":1,"conv_kernel":4,"num_attention_heads":4,"hidden_size":64}`))
	if err == nil || !strings.Contains(err.Error(), "ssm_state_size") {
		t.Errorf("want an error naming ssm_state_size, got %v", err)
	}
}
