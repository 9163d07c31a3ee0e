package analyze

import (
	"math"
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

// vLLM logs "Maximum concurrency for 20,000 tokens per request: 1.56x" for a cache of
// 1,952 blocks of 16 tokens.
func TestConcurrencyAtMatchesVLLMLog(t *testing.T) {
	got := ConcurrencyAt(1952*16, 20000)
	if math.Abs(got-1.56) > 0.005 {
		t.Errorf("concurrency %.4f, want 1.56", got)
	}
}

func TestParamCountAndWeights(t *testing.T) {
	tests := []struct {
		file       string
		lo, hi     float64 // billions, the published sizes
		weightsGiB [2]float64
	}{
		{"llama-3.1-8b.json", 7.9, 8.1, [2]float64{14.5, 15.5}},
		{"llama-3.1-70b.json", 70.0, 71.0, [2]float64{130, 132}},
		{"qwen3-32b.json", 32.5, 33.0, [2]float64{60.5, 61.5}},
		{"deepseek-v3.json", 670, 673, [2]float64{620, 630}}, // fp8 checkpoint, MTP layer left out
		{"kimi-k2.5.json", 1020, 1035, [2]float64{540, 580}}, // int4 experts
		{"gpt-oss-120b.json", 116, 118, [2]float64{60, 66}},  // mxfp4 experts
	}
	for _, tt := range tests {
		c := loadSample(t, tt.file)
		total, _, err := ParamCount(c)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if b := float64(total) / 1e9; b < tt.lo || b > tt.hi {
			t.Errorf("%s: %.2fB parameters, want %.1f-%.1fB", tt.file, b, tt.lo, tt.hi)
		}
		w, _, err := WeightBytes(c, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if g := float64(w) / float64(gib); g < tt.weightsGiB[0] || g > tt.weightsGiB[1] {
			t.Errorf("%s: weights %.1f GiB, want %.1f-%.1f", tt.file, g, tt.weightsGiB[0], tt.weightsGiB[1])
		}
	}
	c := loadSample(t, "llama-3.1-8b.json")
	w, _, err := WeightBytes(c, "fp8", 8)
	if err != nil || w != 8e9 {
		t.Errorf("8B fp8 = %d, %v", w, err)
	}
}

func TestLookupGPU(t *testing.T) {
	for in, want := range map[string]string{
		"h100-sxm": "h100-sxm", "H100 SXM": "h100-sxm", "NVIDIA H100": "h100-sxm",
		"rtx-pro-6000": "rtx-pro-6000", "RTX PRO 6000 Blackwell": "rtx-pro-6000",
		"A100 80GB": "a100-80", "a100_40": "a100-40", "MI300X": "mi300x", "gb200": "gb200",
		"RTX 5090": "rtx-5090", "L40S": "l40s", "h200": "h200", "B200": "b200",
	} {
		g, err := LookupGPU(in)
		if err != nil || g.Name != want {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", in, g.Name, err, want)
		}
	}
	_, err := LookupGPU("tpu-v5")
	if err == nil || !strings.Contains(err.Error(), "h100-sxm") || !strings.Contains(err.Error(), "mi325x") {
		t.Errorf("unknown GPU error should list the catalog: %v", err)
	}
	for _, g := range gpuCatalog() {
		if g.MemoryBytes <= 0 || g.BandwidthBytesS <= 0 || g.InterconnectBytesS <= 0 {
			t.Errorf("%s: incomplete entry", g.Name)
		}
	}
}

// Kimi-K2.5 on 8 RTX PRO 6000 at TP 8 with 70.8 GiB of weights per GPU: each GiB of
// budget holds about 15,280 tokens; a couple of requests at the full context and
// around a hundred at 3,000 tokens, nowhere near 1024.
func TestPlanBudgetKimiOnRTXPro6000(t *testing.T) {
	c := loadSample(t, "kimi-k2.5.json")
	p, err := PlanBudget(c, BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, TP: 8, WeightsGiB: 70.8, ReserveGiB: -1})
	if err != nil {
		t.Fatal(err)
	}
	b := p.Budget
	mem, util, weights := float64(97887*mib), 0.9, 70.8*float64(gib)
	capped := int64(mem * util)
	if want := capped - int64(weights) - gib; b.KVBudgetBytes != want {
		t.Errorf("KV budget %d, want %d", b.KVBudgetBytes, want)
	}
	budgetGiB := float64(b.KVBudgetBytes) / float64(gib)
	if budgetGiB < 13.5 || budgetGiB > 23 {
		t.Errorf("KV budget %.2f GiB, want about 14-23", budgetGiB)
	}
	if perGiB := float64(gib) / float64(p.KV.BytesPerToken()); math.Abs(perGiB-15280) > 1 {
		t.Errorf("%.1f tokens per GiB, want about 15,280", perGiB)
	}
	if p.KVTokens != b.KVBudgetBytes/70272 {
		t.Errorf("KV tokens %d", p.KVTokens)
	}
	if c := p.Concurrency(131072); c < 1 || c > 3 {
		t.Errorf("concurrency at 131,072 tokens %.2f, want a few", c)
	}
	if c := p.Concurrency(3000); c < 60 || c > 130 {
		t.Errorf("concurrency at 3,000 tokens %.2f, want around a hundred", c)
	}
	// Too many weights: a clear error.
	if _, err := PlanBudget(c, BudgetInput{GPU: "rtx-4090", TP: 8, WeightsGiB: 70.8, ReserveGiB: -1}); err == nil ||
		!strings.Contains(err.Error(), "no memory left") {
		t.Errorf("want a no-memory error, got %v", err)
	}
}

func TestPlanBudgetFormula(t *testing.T) {
	c := loadSample(t, "llama-3.1-8b.json")
	p, err := PlanBudget(c, BudgetInput{MemoryGiB: 80, Utilization: 0.9, WeightsGiB: 15, ReserveGiB: 2, GPUs: 2, TP: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 80 × 0.9 − 15 − 2 = 55 GiB; / 131,072 B = 450,560 tokens per replica.
	if p.Budget.KVBudgetBytes != 55*gib || p.KVTokens != 450560 || p.Replicas != 2 {
		t.Errorf("budget %d tokens %d replicas %d", p.Budget.KVBudgetBytes, p.KVTokens, p.Replicas)
	}
	if got := p.Concurrency(4096); got != 2*450560.0/4096 {
		t.Errorf("concurrency %v", got)
	}
	if p.Budget.UnusableBytes != 8*gib {
		t.Errorf("unusable %d", p.Budget.UnusableBytes)
	}
	// Weights estimated from the config when not given.
	p, err = PlanBudget(c, BudgetInput{GPU: "h100-sxm", ReserveGiB: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.WeightsHow, "estimated") || p.Budget.WeightsBytes < 14*gib || p.Budget.WeightsBytes > 16*gib {
		t.Errorf("estimated weights %d (%s)", p.Budget.WeightsBytes, p.WeightsHow)
	}
	if _, err := PlanBudget(c, BudgetInput{GPUs: 3, TP: 2, MemoryGiB: 80}); err == nil {
		t.Error("GPUs not a multiple of TP: no error")
	}
	if _, err := PlanBudget(c, BudgetInput{TP: 1}); err == nil {
		t.Error("no GPU and no memory: no error")
	}
}

func TestProposeLevels(t *testing.T) {
	tests := []struct {
		ceiling float64
		want    []int
	}{
		{72.4, []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128}},
		{2, []int{1, 2, 3, 4}},
		{0.5, []int{1}},
		{math.NaN(), []int{1}},
		{10, []int{1, 2, 4, 6, 8, 12, 16}},
		{1000, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2000}},
	}
	for _, tt := range tests {
		got := ProposeLevels(tt.ceiling)
		if !equalInts(got, tt.want) {
			t.Errorf("ProposeLevels(%v) = %v, want %v", tt.ceiling, got, tt.want)
		}
		if tt.ceiling >= 1 && float64(got[len(got)-1]) > 2.05*tt.ceiling {
			t.Errorf("ProposeLevels(%v) goes beyond twice the ceiling: %v", tt.ceiling, got)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
