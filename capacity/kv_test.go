package capacity

import (
	"testing"
)

// The facts of issue 3: published KV footprints of well-known models.
func TestKVBytesPerTokenSamples(t *testing.T) {
	tests := []struct {
		file  string
		tp    int
		dtype string
		want  int64
		kind  string
	}{
		// DeepSeek-V3 / Kimi-K2: 61 × (512 + 64) × 2 = 70,272 on every TP rank.
		{"deepseek-v3.json", 8, "auto", 70272, "mla"},
		{"deepseek-v3.json", 8, "fp8", 35136, "mla"},
		{"deepseek-v3.json", 1, "bf16", 70272, "mla"},
		{"kimi-k2.5.json", 8, "auto", 70272, "mla"},
		{"kimi-k2.5.json", 8, "fp8", 35136, "mla"},
		// Llama-3.1-70B: 2 × 80 × 8 × 128 × 2 = 327,680; at TP 8 one KV head per rank.
		{"llama-3.1-70b.json", 1, "auto", 327680, "gqa"},
		{"llama-3.1-70b.json", 8, "auto", 40960, "gqa"},
		{"llama-3.1-70b.json", 16, "auto", 40960, "gqa"}, // more ranks than KV heads: replicated
		{"llama-3.1-70b.json", 3, "auto", 2 * 80 * 3 * 128 * 2, "gqa"},
		{"llama-3.1-8b.json", 1, "auto", 131072, "gqa"},
		{"llama-3.1-8b.json", 1, "fp8", 65536, "gqa"},
		{"llama-3.1-8b.json", 1, "fp16", 131072, "gqa"},
		{"qwen3-32b.json", 1, "auto", 262144, "gqa"},
		// gpt-oss-120b: 36 layers (18 sliding over 128 tokens), 8 KV heads of 64.
		{"gpt-oss-120b.json", 1, "auto", 36 * 2 * 8 * 64 * 2, "gqa"},
		{"gpt-oss-120b.json", 8, "auto", 36 * 2 * 1 * 64 * 2, "gqa"},
	}
	for _, tt := range tests {
		c := loadSample(t, tt.file)
		k, err := NewKVModel(c, tt.tp, tt.dtype)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if got := k.BytesPerToken(); got != tt.want {
			t.Errorf("%s TP %d %s: %d bytes/token, want %d", tt.file, tt.tp, tt.dtype, got, tt.want)
		}
		if k.Kind != tt.kind {
			t.Errorf("%s: kind %q, want %q", tt.file, k.Kind, tt.kind)
		}
	}
}

func TestSlidingWindowRequestBytes(t *testing.T) {
	c := loadSample(t, "gpt-oss-120b.json")
	k, err := NewKVModel(c, 1, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if k.FullLayers != 18 || k.SlidingLayers != 18 || k.Window != 128 {
		t.Fatalf("layers full %d sliding %d window %d", k.FullLayers, k.SlidingLayers, k.Window)
	}
	perLayer := float64(2 * 8 * 64 * 2)
	// Under the window every layer grows; beyond it only the full layers do.
	if got, want := k.RequestBytes(100), 36*perLayer*100; got != want {
		t.Errorf("100 tokens: %v, want %v", got, want)
	}
	if got, want := k.RequestBytes(10000), 18*perLayer*10000+18*perLayer*128; got != want {
		t.Errorf("10000 tokens: %v, want %v", got, want)
	}
}
