package capacity

import (
	"strings"
	"testing"
)

func TestShapeDefaults(t *testing.T) {
	tests := []struct {
		in   BudgetInput
		want Shape
		name string
	}{
		{BudgetInput{}, Shape{TP: 1, DP: 1, PP: 1, Replicas: 1}, "TP 1"},
		{BudgetInput{GPUs: 8}, Shape{TP: 8, DP: 1, PP: 1, Replicas: 1}, "TP 8"},
		{BudgetInput{GPUs: 8, DP: 8, EP: true}, Shape{TP: 1, DP: 8, PP: 1, EP: true, Replicas: 1}, "DP 8 × TP 1 + EP"},
		{BudgetInput{DP: 2, TP: 4}, Shape{TP: 4, DP: 2, PP: 1, Replicas: 1}, "DP 2 × TP 4"},
		{BudgetInput{GPUs: 16, TP: 4, PP: 2}, Shape{TP: 4, DP: 1, PP: 2, Replicas: 2}, "TP 4 × PP 2, 2 replicas"},
	}
	for _, tt := range tests {
		got := tt.in.Shape()
		if got != tt.want || got.String() != tt.name {
			t.Errorf("%+v: got %+v %q, want %+v %q", tt.in, got, got, tt.want, tt.name)
		}
	}
	if err := (BudgetInput{GPUs: 12, TP: 4, DP: 2}).CheckShape(); err == nil || !strings.Contains(err.Error(), "TP × BudgetInput.DP") {
		t.Errorf("12 GPUs at DP 2 × TP 4: %v", err)
	}
}

// Kimi-K2.5 on 8 RTX PRO 6000, weights estimated: 21.83 GiB of rest (attention,
// embeddings, dense and shared MLPs in bf16) and 531.56 GiB of int4 experts.
//   - TP 8: (21.83 + 531.56) / 8 = 69.17 GiB per GPU; one MLA cache of 70,272 B/token
//     replicated on all 8 GPUs: 86.03 − 69.17 − 1 = 15.86 GiB, 242,324 tokens.
//   - DP 8 + EP (vLLM's layout): 21.83 replicated + 531.56 / 8 = 88.28 GiB per GPU,
//     more than the 86.03 GiB the utilization cap allows: no KV cache at all.
//   - DP 2 × TP 4 + EP: 21.83 / 4 + 531.56 / 8 = 71.90 GiB; 13.13 GiB per GPU, two
//     independent caches of 200,625 tokens: 133.75 requests of 3,000 tokens vs 80.77.
//
// Llama-3.1-8B at PP 2: 16 of 32 layers per stage halve both weights and KV per GPU.
func TestShapeWeightsAndKV(t *testing.T) {
	c := loadSample(t, "kimi-k2.5.json")
	gibs := func(b int64) float64 { return float64(b) / float64(gib) }
	p := plan(t, "kimi-k2.5.json", BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, ReserveGiB: -1})
	if !near(gibs(p.Budget.WeightsBytes), 69.17, 0.001) || p.KVTokens != 242324 || p.Shape.KVCaches() != 1 {
		t.Errorf("TP 8: %.2f GiB, %d tokens, %d caches", gibs(p.Budget.WeightsBytes), p.KVTokens, p.Shape.KVCaches())
	}
	tp8 := p.Concurrency(3000)
	_, err := PlanBudget(c, BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, DP: 8, EP: true, ReserveGiB: -1})
	if err == nil || !strings.Contains(err.Error(), "88.28 GiB of weights") {
		t.Errorf("DP 8 + EP: want no memory left at 88.28 GiB of weights, got %v", err)
	}
	p = plan(t, "kimi-k2.5.json", BudgetInput{GPU: "rtx-pro-6000", GPUs: 8, DP: 2, TP: 4, EP: true, ReserveGiB: -1})
	if !near(gibs(p.Budget.WeightsBytes), 71.90, 0.001) || p.KVTokens != 200625 || p.Shape.KVCaches() != 2 ||
		!near(p.Concurrency(3000), 133.75, 0.001) || !near(tp8, 80.77, 0.001) {
		t.Errorf("DP 2 × TP 4: %.2f GiB, %d tokens, %d caches, %.2f requests (TP 8 %.2f)",
			gibs(p.Budget.WeightsBytes), p.KVTokens, p.Shape.KVCaches(), p.Concurrency(3000), tp8)
	}
	// A request lives on one rank: DP adds requests, not context.
	if f := p.FitsOnce(262144); !near(f, 200625.0/262144, 0.001) {
		t.Errorf("fits once %.3f", f)
	}

	one := plan(t, "llama-3.1-8b.json", BudgetInput{GPU: "l40s", ReserveGiB: -1})
	pp2 := plan(t, "llama-3.1-8b.json", BudgetInput{GPU: "l40s", GPUs: 2, PP: 2, ReserveGiB: -1})
	if pp2.KV.BytesPerToken() != one.KV.BytesPerToken()/2 || pp2.Budget.WeightsBytes != one.Budget.WeightsBytes/2 || pp2.Shape.KVCaches() != 1 {
		t.Errorf("PP 2: %d B/token, %d weights; one GPU %d, %d", pp2.KV.BytesPerToken(), pp2.Budget.WeightsBytes, one.KV.BytesPerToken(), one.Budget.WeightsBytes)
	}
}
