package capacity

import (
	"math"
	"strings"
	"testing"
)

// vLLM logs "Maximum concurrency for 20,000 tokens per request: 1.56x" for a cache of
// 1,952 blocks of 16 tokens.
func TestConcurrencyAtMatchesVLLMLog(t *testing.T) {
	got := ConcurrencyAt(1952*16, 20000)
	if math.Abs(got-1.56) > 0.005 {
		t.Errorf("concurrency %.4f, want 1.56", got)
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

// TP 0 is one engine over every GPU, GPUs 0 one engine: the one definition every
// subcommand shares (plan used to default TP to 1, analyze to GPUs).
func TestDeploymentDefaults(t *testing.T) {
	tests := []struct{ gpus, tp, wantGPUs, wantTP int }{
		{0, 0, 1, 1},
		{8, 0, 8, 8},
		{0, 4, 4, 4},
		{16, 8, 16, 8},
		{3, 2, 3, 2}, // not a multiple: PlanBudget's error, not Deployment's
	}
	for _, tt := range tests {
		g, tp := BudgetInput{GPUs: tt.gpus, TP: tt.tp}.Deployment()
		if g != tt.wantGPUs || tp != tt.wantTP {
			t.Errorf("GPUs %d TP %d: got GPUs %d TP %d, want %d and %d", tt.gpus, tt.tp, g, tp, tt.wantGPUs, tt.wantTP)
		}
	}
	c := loadSample(t, "llama-3.1-70b.json")
	p, err := PlanBudget(c, BudgetInput{GPU: "h100-sxm", GPUs: 8, ReserveGiB: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget.TP != 8 || p.Replicas != 1 || p.KV.BytesPerToken() != 40960 {
		t.Errorf("8 GPUs, TP unset: TP %d, %d replicas, %d bytes/token; want TP 8, one replica, 40,960", p.Budget.TP, p.Replicas, p.KV.BytesPerToken())
	}
	if _, err := PlanBudget(c, BudgetInput{GPU: "h100-sxm", GPUs: 3, TP: 2}); err == nil || !strings.Contains(err.Error(), "BudgetInput.GPUs") {
		t.Errorf("want an error naming BudgetInput.GPUs, got %v", err)
	}
}
