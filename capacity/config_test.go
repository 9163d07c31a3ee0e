package capacity

import (
	"strings"
	"testing"
)

func loadSample(t *testing.T, name string) *ModelConfig {
	t.Helper()
	c, err := LoadModelConfig("../samples/models/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConfigErrorsNameTheField(t *testing.T) {
	tests := []struct{ cfg, field string }{
		{`{"hidden_size":10}`, "num_hidden_layers"},
		{`{"num_hidden_layers":2,"kv_lora_rank":512}`, "qk_rope_head_dim"},
		{`{"num_hidden_layers":2}`, "num_key_value_heads"},
		{`{"num_hidden_layers":2,"num_key_value_heads":2}`, "head_dim"},
		{`{"num_hidden_layers":2,"num_attention_heads":2,"hidden_size":8,"layer_types":["sliding_attention","full_attention"]}`, "sliding_window"},
	}
	for _, tt := range tests {
		c, err := ParseModelConfig([]byte(tt.cfg))
		if err == nil {
			_, err = NewKVModel(c, 1, "auto")
		}
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: want an error naming %s, got %v", tt.cfg, tt.field, err)
		}
	}
	if _, err := LoadModelConfig("testdata/no-such-config.json"); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := ParseModelConfig([]byte(`[1,2]`)); err == nil {
		t.Error("not an object: no error")
	}
	c := loadSample(t, "llama-3.1-8b.json")
	if _, err := NewKVModel(c, 1, "int3"); err == nil {
		t.Error("bad KV dtype: no error")
	}
}
