package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestPlanHeadlinesModelledReserve (issue 28, item 4): Kimi-K2.5 TP 8 on 8 × H100
// with 72.02 GiB of weights a GPU at --gpu-util 0.95, where vLLM sized the KV
// cache at 0.64 GiB per GPU: the headline budget is the modelled reserve's, within
// 1.5× of vLLM's; the flat 1 GiB (2.65 GiB, 4× vLLM's) is named beside it, not as a
// 5.5×-wide range; --reserve-gib 1 makes the flat figure the headline.
func TestPlanHeadlinesModelledReserve(t *testing.T) {
	args := []string{"plan", "--model-config", "../../samples/models/kimi-k2.5.json", "--gpu", "h100-sxm", "--gpus", "8", "--tp", "8",
		"--weights-gib", "72.02", "--gpu-util", "0.95", "--max-model-len", "8192", "--prompt-tokens", "1000", "--output-tokens", "500"}
	out := ceiling(t, args...)
	budget := regexp.MustCompile(`= KV cache budget\s+([0-9.]+) GiB`).FindStringSubmatch(out)
	if budget == nil {
		t.Fatalf("no KV budget in:\n%s", out)
	}
	got, _ := strconv.ParseFloat(budget[1], 64)
	if r := got / 0.64; r < 1/1.5 || r > 1.5 {
		t.Errorf("headline KV budget %.2f GiB is %.2f× vLLM's 0.64 GiB", got, r)
	}
	for _, want := range []string{"(modelled: ", "with a flat 1.00 GiB reserve (--reserve-gib)    2.65 GiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "range, as the reserve goes") {
		t.Errorf("a range more than 2× wide is shown:\n%s", out)
	}
	flat := ceiling(t, append(args, "--reserve-gib", "1")...)
	if !strings.Contains(flat, "= KV cache budget                       2.65 GiB") || !strings.Contains(flat, "(flat, as given by --reserve-gib)") {
		t.Errorf("--reserve-gib 1 does not make the flat figure the headline:\n%s", flat)
	}
}

// TestReserveEngineFlags: --engine, --max-num-batched-tokens and --max-num-seqs
// set the modelled reserve (SGLang's Qwen3-235B-A22B-FP8 at TP 4 and
// --mem-fraction-static 0.93 holds 367,404 tokens in its log, vllm#21348: the plan
// is within 1.5× of it); each is refused beside --reserve-gib, and a bad value is
// refused by flag.
func TestReserveEngineFlags(t *testing.T) {
	base := []string{"plan", "--model-config", "../../capacity/testdata/models/qwen3-235b-a22b-fp8.json", "--gpu", "h100-sxm", "--gpus", "4"}
	out := ceiling(t, append(base, "--engine", "sglang", "--gpu-util", "0.93")...)
	m := regexp.MustCompile(`bytes per token\s+([0-9,]+) tokens`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "SGLang: the CUDA context") {
		t.Fatalf("plan lacks the SGLang reserve or the tokens:\n%s", out)
	}
	tokens, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if r := tokens / 367404; r < 1/1.5 || r > 1.5 {
		t.Errorf("%g tokens per cache, %.2f× SGLang's logged 367,404", tokens, r)
	}
	small := ceiling(t, append(base, "--max-num-batched-tokens", "2048", "--max-num-seqs", "64")...)
	if !strings.Contains(small, "vLLM at max_num_batched_tokens 2,048, max_num_seqs 64") {
		t.Errorf("the batch limits given are not the reserve's:\n%s", small)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "tgi"}, `--engine "tgi": the reserve is modelled for vllm, vllm-v0 and sglang only`},
		{[]string{"--engine", "sglang", "--reserve-gib", "1"}, "--engine sets the modelled reserve, --reserve-gib a flat one"},
		{[]string{"--max-num-seqs", "-3"}, "--max-num-seqs -3 is out of range"},
		{[]string{"--max-num-batched-tokens", "-1"}, "--max-num-batched-tokens -1 is out of range"},
	} {
		code, _, stderr := runCLI(append(base, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("plan %v: exit %d, want usage error %q: %s", tt.args, code, tt.want, stderr)
		}
	}
}
