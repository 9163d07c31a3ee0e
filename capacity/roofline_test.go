package capacity

import (
	"math"
	"testing"
)

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

func plan(t *testing.T, file string, in BudgetInput) *PlanResult {
	t.Helper()
	p, err := PlanBudget(loadSample(t, file), in)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Worked by hand from the config (see TestParamCountAndWeights for the count):
//
// Llama-3.1-8B: embeddings 2 × 128,256 × 4,096 = 1,050,673,152; per layer attention
// 2 × 4,096² + 2 × 4,096 × 1,024 = 41,943,040 and MLP 3 × 4,096 × 14,336 = 176,160,768,
// × 32 layers = 6,979,321,856; total 8,029,995,008 parameters = 16,059,990,016 bytes in
// bf16. KV per token 2 × 32 × 8 × 128 × 2 = 131,072 bytes.
//
//   - H100 SXM, batch 1, 1,024 tokens of context: (16,059,990,016 + 1,024 × 131,072)
//     = 16,194,207,744 bytes / 3.35e12 B/s = 4.834 ms per token, 206.9 tok/s per user
//     (the "about 16 GB per step at 3.35 TB/s, at most ~200 tok/s"). Compute:
//     2 × 8.03e9 / 989e12 = 16.24 µs of matmuls, plus attention 2 × 32 heads ×
//     (128 + 128) × 1,024 attended × 32 layers = 536,870,912 FLOPs / 989e12 = 0.543 µs:
//     16.78 µs, memory-bound by 300×.
//   - batch 64, 2,048 tokens: KV 64 × 2,048 × 131,072 = 17,179,869,184; (16.06e9 +
//     17.18e9) / 3.35e12 = 9.922 ms, 100.8 tok/s per user, 6,450 tok/s in total;
//     compute 2 × 8.03e9 × 64 / 989e12 = 1.039 ms.
//   - batch 1,024, 16 tokens: KV 1,024 × 16 × 131,072 = 2,147,483,648; the matmuls
//     2 × 8.03e9 × 1,024 / 989e12 = 16.63 ms (compute-bound: their weights take
//     4.794 ms), then attention reads the KV cache, 2,147,483,648 / 3.35e12 = 0.641 ms
//     (its 1,024 × 16,384 × 16 × 32 FLOPs take 8.7 µs): 17.27 ms, compute-bound,
//     57.9 tok/s per user, 59,296 in total. A single max(memory, compute) would hide
//     the KV read under the matmuls: 16.63 ms.
//
// Llama-3.1-70B bf16 at TP 8 on H100 SXM, batch 1, 1 token: 70,553,706,496 parameters
// (TestParamCountAndWeights) = 141,107,412,992 bytes / 8 = 17,638,426,624 per GPU /
// 3.35e12 = 5.265 ms; all-reduce 2 × 80 layers × (8 µs + 2 × 7/8 × 8,192 × 2 B /
// 450e9 B/s = 0.0637 µs) = 1.290 ms; step 6.555 ms, 152.6 tok/s.
func TestRooflineWorkedExamples(t *testing.T) {
	p := plan(t, "llama-3.1-8b.json", BudgetInput{GPU: "h100-sxm", ReserveGiB: -1})
	r, err := NewRoofline(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.RestBytesPerGPU != 16059990016 || r.ExpertBytesPerGPU != 0 || r.ComputeDtype != "bf16" {
		t.Fatalf("weights per GPU %.0f + %.0f (%s), want 16,059,990,016 in bf16", r.RestBytesPerGPU, r.ExpertBytesPerGPU, r.ComputeDtype)
	}
	tests := []struct {
		name                string
		batch, ctx          float64
		stepMs, user, total float64
		bound               string
	}{
		{"batch 1", 1, 1024, 4.834, 206.9, 206.9, "memory"},
		{"batch 64", 64, 2048, 9.922, 100.8, 6450, "memory"},
		{"batch 1024", 1024, 16, 17.27, 57.90, 59296, "compute"},
	}
	for _, tt := range tests {
		pt := r.At(tt.batch, tt.ctx)
		if !near(pt.StepS*1e3, tt.stepMs, 0.002) || !near(pt.PerUserTokS, tt.user, 0.03) || !near(pt.TotalTokS, tt.total, 0.03) || pt.Bound != tt.bound {
			t.Errorf("%s: step %.3f ms, %.1f tok/s per user, %.0f total, %s-bound; want %.3f ms, %.1f, %.0f, %s",
				tt.name, pt.StepS*1e3, pt.PerUserTokS, pt.TotalTokS, pt.Bound, tt.stepMs, tt.user, tt.total, tt.bound)
		}
	}
	if pt := r.At(1, 1024); !near(pt.ComputeS*1e6, 16.78, 0.002) || !near(pt.AttentionS*1e6, 0.543, 0.002) || pt.CommS != 0 {
		t.Errorf("batch 1 compute %.2f µs (attention %.3f) comm %g, want 16.78 µs (0.543) and none on one GPU", pt.ComputeS*1e6, pt.AttentionS*1e6, pt.CommS)
	}

	p = plan(t, "llama-3.1-70b.json", BudgetInput{GPU: "h100-sxm", GPUs: 8, ReserveGiB: -1})
	r, err = NewRoofline(p)
	if err != nil {
		t.Fatal(err)
	}
	pt := r.At(1, 1)
	if !near(pt.MemoryS*1e3, 5.265, 0.002) || !near(pt.CommS*1e3, 1.290, 0.002) || !near(pt.PerUserTokS, 152.6, 0.003) {
		t.Errorf("70B TP 8: memory %.3f ms comm %.3f ms %.1f tok/s, want 5.265, 1.290, 152.6", pt.MemoryS*1e3, pt.CommS*1e3, pt.PerUserTokS)
	}
}

// Kimi-K2.5 (61 layers, 60 MoE layers of 384 experts, 8 per token) at TP 8 on the
// PCIe RTX PRO 6000 box, batch 1, 1 token, with the estimate's weights (21.83 GiB
// rest, 531.56 GiB experts): per GPU 2.729 GiB rest + 66.45 GiB × 8/384 = 1.384 GiB of
// touched experts = 4.113 GiB = 4.416e9 B / 1.792e12 = 2.464 ms; the all-reduces
// 2 × 61 × 25 µs = 3.05 ms (plus 2 × 7/8 × 7,168 × 2 B / 64e9 = 0.39 µs each) exceed
// it: communication-bound, at most 1/5.56 ms = 180 tok/s per user. At batch 256 the
// step touches 1 − (1 − 8/384)^256 = 99.5% of the experts.
func TestRooflineMoEOnPCIe(t *testing.T) {
	p := plan(t, "kimi-k2.5.json", BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, ReserveGiB: -1})
	r, err := NewRoofline(p)
	if err != nil {
		t.Fatal(err)
	}
	if r.MoELayers != 60 || r.Layers != 61 || r.AllReduceLatencyS != AllReduceLatencyPCIe {
		t.Fatalf("MoE layers %d layers %d α %g", r.MoELayers, r.Layers, r.AllReduceLatencyS)
	}
	pt := r.At(1, 1)
	if !near(pt.WeightBytes/float64(gib), 4.113, 0.002) || !near(pt.MemoryS*1e3, 2.464, 0.003) ||
		!near(pt.CommS*1e3, 3.098, 0.003) || pt.Bound != "communication" || !near(pt.PerUserTokS, 180, 0.01) {
		t.Errorf("Kimi TP 8 batch 1: %.3f GiB, memory %.3f ms, comm %.3f ms, %s, %.1f tok/s", pt.WeightBytes/float64(gib), pt.MemoryS*1e3, pt.CommS*1e3, pt.Bound, pt.PerUserTokS)
	}
	touched := (r.At(256, 1).WeightBytes - r.RestBytesPerGPU) / r.ExpertBytesPerGPU
	if !near(touched, 0.9954, 0.001) {
		t.Errorf("batch 256 touches %.4f of the experts, want 0.9954", touched)
	}
	if _, err := NewRoofline(plan(t, "llama-3.1-8b.json", BudgetInput{MemoryGiB: 80, ReserveGiB: -1})); err == nil {
		t.Error("a GPU given by memory only has no bandwidth: no error")
	}
}

// The roofline with prefill is the decode roofline with each output token's share
// of prompt FLOPs added: with no prompt it is the decode roofline at half the
// output, it never exceeds the decode roofline at the same context, and a longer
// prompt never raises it (more prefill FLOPs, more KV read per step).
func TestRooflineAtWorkload(t *testing.T) {
	for _, tc := range []struct {
		file string
		in   BudgetInput
	}{
		{"llama-3.1-8b.json", BudgetInput{GPU: "h100-sxm", GPUs: 1}},
		{"llama-3.1-70b.json", BudgetInput{GPU: "h100-sxm", GPUs: 4, TP: 4}},
		{"kimi-k2.5.json", BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, TP: 8, WeightsGiB: 70.8}},
	} {
		r, err := NewRoofline(plan(t, tc.file, tc.in))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []float64{1, 8, 64, 512} {
			if got, want := r.AtWorkload(b, 0, 512).TotalTokS, r.At(b, 256).TotalTokS; !near(got, want, 1e-12) {
				t.Errorf("%s b=%g: no prompt %g; want the decode roofline %g", tc.file, b, got, want)
			}
			prev := math.Inf(1)
			for _, prompt := range []float64{0, 128, 1024, 8000, 32000} {
				w := r.AtWorkload(b, prompt, 512)
				if d := r.At(b, prompt+256); w.TotalTokS > d.TotalTokS*(1+1e-12) {
					t.Errorf("%s b=%g prompt %g: %g above the decode roofline %g", tc.file, b, prompt, w.TotalTokS, d.TotalTokS)
				}
				if w.TotalTokS > prev*(1+1e-12) {
					t.Errorf("%s b=%g: prompt %g raised the roofline to %g from %g", tc.file, b, prompt, w.TotalTokS, prev)
				}
				prev = w.TotalTokS
			}
		}
	}
}

// Attention FLOPs worked by hand from the configs (2 × query heads per GPU × (d_qk +
// d_v) per attended token per layer):
//
//   - Llama-3.1-8B, TP 1: 2 × 32 × (128 + 128) = 16,384. Batch 1, 1,024-token prompt,
//     1,024 output: the decode token attends 1,024 + 512 = 1,536 tokens in 32 layers,
//     805,306,368 FLOPs; the prompt's 1,024²/2 = 524,288 pairs × 32 layers × 16,384 =
//     274,877,906,944 FLOPs, 268,435,456 per output token; 1,073,741,824 / 989e12 =
//     1.0857 µs at the BF16 peak.
//   - Llama-3.1-70B, TP 4: 64 query heads (not the 8 KV heads) / 4 = 16, 2 × 16 × 256
//     = 8,192.
//   - Kimi-K2.5 (MLA), TP 8: 64 / 8 = 8 heads × 2 × (128 + 64 + 128) = 5,120.
//   - gpt-oss-120b, TP 1: 2 × 64 × (64 + 64) = 16,384; 18 full layers and 18 sliding
//     over 128 tokens. An 8,192-token prompt: 18 × 8,192²/2 + 18 × (128 × 8,192 −
//     128²/2) = 622,706,688 pairs = 10,202,426,376,192 FLOPs; a decode token at 1,000
//     tokens of context: (18 × 1,000 + 18 × 128) × 16,384 = 332,660,736. With an FP8
//     KV cache on H200 it attends at the FP8 peak.
func TestRooflineAttention(t *testing.T) {
	for _, tc := range []struct {
		file string
		in   BudgetInput
		pair float64
	}{
		{"llama-3.1-8b.json", BudgetInput{GPU: "h100-sxm", GPUs: 1, ReserveGiB: -1}, 16384},
		{"llama-3.1-70b.json", BudgetInput{GPU: "h100-sxm", GPUs: 4, TP: 4, ReserveGiB: -1}, 8192},
		{"kimi-k2.5.json", BudgetInput{GPU: "b200", GPUs: 8, TP: 8, ReserveGiB: -1}, 5120},
		{"gpt-oss-120b.json", BudgetInput{GPU: "h200", GPUs: 1, ReserveGiB: -1}, 16384},
	} {
		r, err := NewRoofline(plan(t, tc.file, tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if r.AttnFLOPsPerPair != tc.pair || r.AttnDtype != "bf16" {
			t.Errorf("%s: %g FLOPs per pair in %s, want %g in bf16", tc.file, r.AttnFLOPsPerPair, r.AttnDtype, tc.pair)
		}
	}

	r, err := NewRoofline(plan(t, "llama-3.1-8b.json", BudgetInput{GPU: "h100-sxm", ReserveGiB: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if pt := r.AtWorkload(1, 1024, 1024); !near(pt.AttentionS*1e6, 1.0857, 0.001) {
		t.Errorf("8B batch 1 1,024/1,024: attention %.4f µs, want 1.0857", pt.AttentionS*1e6)
	}

	r, err = NewRoofline(plan(t, "gpt-oss-120b.json", BudgetInput{GPU: "h200", ReserveGiB: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if r.KV.FullLayers != 18 || r.KV.SlidingLayers != 18 || r.KV.Window != 128 {
		t.Fatalf("gpt-oss-120b: %d full, %d sliding layers over %d", r.KV.FullLayers, r.KV.SlidingLayers, r.KV.Window)
	}
	if got := r.promptAttnFLOPs(8192); !near(got, 10202426376192, 1e-9) {
		t.Errorf("gpt-oss-120b 8,192-token prompt: %.0f attention FLOPs, want 10,202,426,376,192", got)
	}
	if got := r.decodeAttnFLOPs(1000); !near(got, 332660736, 1e-9) {
		t.Errorf("gpt-oss-120b decode at 1,000 tokens: %.0f attention FLOPs, want 332,660,736", got)
	}
	fp8, err := NewRoofline(plan(t, "gpt-oss-120b.json", BudgetInput{GPU: "h200", KVDtype: "fp8", ReserveGiB: -1}))
	if err != nil {
		t.Fatal(err)
	}
	if fp8.AttnDtype != "fp8" || fp8.AttnPeakFLOPs != fp8.GPU.FP8FLOPs {
		t.Errorf("gpt-oss-120b with an FP8 KV cache attends in %s at %g", fp8.AttnDtype, fp8.AttnPeakFLOPs)
	}
}

// attendedPairs is the causal count P²/2, capped by a window.
func TestAttendedPairs(t *testing.T) {
	for _, tt := range []struct{ tokens, window, want float64 }{
		{0, 0, 0},
		{1000, 0, 500000},
		{100, 128, 5000},      // shorter than the window: the whole causal triangle
		{1000, 128, 119808},   // 128 × 1,000 − 128²/2
		{32768, 128, 4186112}, // linear in the prompt beyond the window
		{32768, 0, 536870912}, // quadratic without one
	} {
		if got := attendedPairs(tt.tokens, tt.window); got != tt.want {
			t.Errorf("attendedPairs(%g, %g) = %g, want %g", tt.tokens, tt.window, got, tt.want)
		}
	}
}

// PrefillS, worked by hand: Llama-3.1-8B (8,029,995,008 parameters, TestParamCountAndWeights)
// on one H100 SXM, a 1,024-token prompt: matmuls 2 × 8,029,995,008 × 1,024 / 989e12 =
// 16.628 ms; attention 524,288 pairs × 32 layers × 16,384 = 274,877,906,944 FLOPs /
// 989e12 = 0.278 ms; 16.906 ms. At 32,768 tokens the attention is 1,024× the pairs,
// 284.6 ms, beside 532.1 ms of matmuls: 816.7 ms, prefill grows faster than the prompt.
func TestRooflinePrefillS(t *testing.T) {
	r, err := NewRoofline(plan(t, "llama-3.1-8b.json", BudgetInput{GPU: "h100-sxm", ReserveGiB: -1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ prompt, wantMs float64 }{
		{0, 0},
		{1024, 16.906},
		{32768, 816.71},
	} {
		if got := r.PrefillS(tt.prompt) * 1e3; !near(got, tt.wantMs, 0.001) {
			t.Errorf("prefill of %g tokens: %.3f ms, want %.3f", tt.prompt, got, tt.wantMs)
		}
	}
}
