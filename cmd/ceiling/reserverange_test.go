package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReserveRangeWhereItMovesTheAnswer (issue 17, item 3): where the weights leave
// little memory (Kimi-K2.5 on 8 × RTX PRO 6000 with 70.8 GiB of weights a GPU), the
// modelled reserve moves the KV budget by more than a tenth, so analyze (text and
// JSON) and the report show the budget as a range with the assumption named, as plan
// does; where it does not (8 × H200), no range appears.
func TestReserveRangeWhereItMovesTheAnswer(t *testing.T) {
	sample := "../../samples/llamacpp-d768-4slots.parquet"
	deployment := []string{"--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "rtx-pro-6000", "--gpus", "8", "--tp", "8", "--weights-gib", "70.8"}
	r := analyzeRunJSON(t, append([]string{sample}, deployment...)...)
	g := r.Capacity.KVBudgetRange
	if g == nil {
		t.Fatalf("capacity %+v: no kv_budget_range where the reserve moves the budget", r.Capacity)
	}
	// plan prints the same range: 12.07–14.23 GiB (TestPlanKimiNumbers).
	const gib = 1 << 30
	if lo, hi := float64(g.LowBytes)/gib, float64(g.HighBytes)/gib; lo < 12.0 || lo > 12.1 || hi < 14.2 || hi > 14.3 || g.LowTokens >= g.HighTokens {
		t.Errorf("range %.2f–%.2f GiB (%d–%d tokens), want 12.07–14.23 GiB as plan gives", lo, hi, g.LowTokens, g.HighTokens)
	}
	text := ceiling(t, append([]string{"analyze", sample}, deployment...)...)
	if !strings.Contains(text, "KV budget as the reserve goes: 12.1–14.2 GiB per GPU") || !strings.Contains(text, "max_num_batched_tokens 8,192") {
		t.Errorf("analyze text lacks the range and its assumption:\n%s", text)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	ceiling(t, append([]string{"report", sample, "-o", html}, deployment...)...)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "12.1 GiB–14.2 GiB per GPU as the reserve goes") {
		t.Errorf("report lacks the KV budget range")
	}

	roomy := analyzeRunJSON(t, sample, "--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "h200", "--gpus", "8")
	if roomy.Capacity.KVBudgetRange != nil {
		t.Errorf("a range %+v where the reserve moves the budget by less than a tenth", *roomy.Capacity.KVBudgetRange)
	}
}
