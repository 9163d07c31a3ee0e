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
//     2 × 8.03e9 / 989e12 = 16.2 µs: memory-bound by 300×.
//   - batch 64, 2,048 tokens: KV 64 × 2,048 × 131,072 = 17,179,869,184; (16.06e9 +
//     17.18e9) / 3.35e12 = 9.922 ms, 100.8 tok/s per user, 6,450 tok/s in total;
//     compute 2 × 8.03e9 × 64 / 989e12 = 1.039 ms.
//   - batch 1,024, 16 tokens: KV 1,024 × 16 × 131,072 = 2,147,483,648; memory
//     18,207,473,664 / 3.35e12 = 5.435 ms; compute 2 × 8.03e9 × 1,024 / 989e12 =
//     16.63 ms: compute-bound, 60.1 tok/s per user, 61,590 in total.
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
		{"batch 1024", 1024, 16, 16.63, 60.13, 61590, "compute"},
	}
	for _, tt := range tests {
		pt := r.At(tt.batch, tt.ctx)
		if !near(pt.StepS*1e3, tt.stepMs, 0.002) || !near(pt.PerUserTokS, tt.user, 0.03) || !near(pt.TotalTokS, tt.total, 0.03) || pt.Bound != tt.bound {
			t.Errorf("%s: step %.3f ms, %.1f tok/s per user, %.0f total, %s-bound; want %.3f ms, %.1f, %.0f, %s",
				tt.name, pt.StepS*1e3, pt.PerUserTokS, pt.TotalTokS, pt.Bound, tt.stepMs, tt.user, tt.total, tt.bound)
		}
	}
	if pt := r.At(1, 1024); !near(pt.ComputeS*1e6, 16.24, 0.01) || pt.CommS != 0 {
		t.Errorf("batch 1 compute %.2f µs comm %g, want 16.24 µs and none on one GPU", pt.ComputeS*1e6, pt.CommS)
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
