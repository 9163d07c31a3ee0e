package analyze

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
)

// Cost per million output tokens = GPUs × USD/h ÷ (output tok/s × 3600) × 10^6.
// 8 GPUs at $2.50 an hour producing 2,000 tok/s: $20/h ÷ 7.2M tokens/h = $2.78 per
// million; with 3,000-token prompts for 1,000 output tokens the 8,000 tok/s of prompt
// and output cost $0.694 per million.
func TestCosts(t *testing.T) {
	out, total := costs(2.5, 8, 2000, Level{MeanPromptTokens: 3000, MeanOutputTokens: 1000})
	if out == nil || math.Abs(*out-2.7778) > 1e-3 || total == nil || math.Abs(*total-0.69444) > 1e-4 {
		t.Errorf("costs %v %v, want 2.78 and 0.694", out, total)
	}
	if out, _ := costs(0, 8, 2000, Level{}); out != nil {
		t.Error("no price: want no cost")
	}
}

// 1,000 users who think 30 s between requests of 10 s E2E send 1,000 ÷ 40 = 25
// requests/s; one deployment serves 4 within the SLOs; at 20% headroom each carries
// 3.2, so ceil(25 ÷ 3.2) = 8 deployments of 8 GPUs = 64 GPUs, at 25 ÷ 32 = 78% load.
func TestSizing(t *testing.T) {
	e2e := 10.0
	r := &Run{Levels: []Level{{Level: 3, E2E: Summary{Mean: &e2e}}}}
	s := sizing(&AtCeiling{Level: 3, RequestS: 4}, r, 8, DecisionOptions{TargetUsers: 1000, ThinkTimeS: 30})
	if s.TargetRPS != 25 || s.Deployments != 8 || s.GPUs != 64 || math.Abs(s.Utilization-0.78125) > 1e-9 || s.Headroom != DefaultHeadroom {
		t.Errorf("sizing %+v", s)
	}
	s = sizing(&AtCeiling{Level: 3, RequestS: 4}, r, 8, DecisionOptions{TargetRPS: 3, Headroom: 0.5})
	if s.Deployments != 2 {
		t.Errorf("3 rps at 4 per deployment, half kept spare: %d deployments, want 2", s.Deployments)
	}
}

// peerSweep is one of the aurotripathy vLLM sweeps of the shared peer results, with its deployment.
type peerSweep struct {
	prefix, gpu, weightDtype string
}

// TestRooflineOnPeerRuns puts the real vLLM sweeps on one H100 (bf16) and one L40S
// (FP8 weights) of Llama-3.1-8B beside their roofline, level by level. The levels are
// built from vLLM's own summary numbers: output tok/s as measured, per-user tok/s =
// 1 / median TPOT, and the decode batch by Little's law, output tok/s × mean TPOT.
// Every level must land below its roofline; the figures are logged for the README.
func TestRooflineOnPeerRuns(t *testing.T) {
	peers := loadPeerResults(t)
	for _, sw := range []peerSweep{
		{"aurotripathy-vllm-bench-h100-fp16-llama31-8b", "h100-sxm", ""},
		{"aurotripathy-vllm-bench-l40s-fp8-llama31-8b", "l40s", "fp8"},
	} {
		opt := Options{ModelConfig: "../samples/models/llama-3.1-8b.json",
			BudgetInput: capacity.BudgetInput{GPU: sw.gpu, GPUs: 1, ReserveGiB: -1, WeightDtype: sw.weightDtype}}
		roof, note := runRoofline(opt)
		if roof == nil {
			t.Fatalf("%s: %s", sw.gpu, note)
		}
		var names []string
		for n := range peers {
			if strings.HasPrefix(n, sw.prefix) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		if len(names) < 8 {
			t.Fatalf("%s: %d files, want at least 8", sw.prefix, len(names))
		}
		for _, n := range names {
			s := peers[n].Summary
			num := func(k string) float64 { v, _ := s[k].(float64); return v }
			outTokS, meanTPOT := num("output_throughput"), num("mean_tpot_ms")/1e3
			completed := num("completed")
			l := Level{Concurrency: int(num("max_concurrency")), OutputTokS: outTokS, PerUserTokS: 1e3 / num("median_tpot_ms"),
				DecodeConcurrency: outTokS * meanTPOT,
				MeanPromptTokens:  num("total_input_tokens") / completed, MeanOutputTokens: num("total_output_tokens") / completed}
			lr := levelRoofline(roof, l)
			if lr == nil {
				t.Fatalf("%s: no roofline", n)
			}
			if lr.PctTotal <= 0 || lr.PctTotal >= 100 || lr.PctPerUser <= 0 || lr.PctPerUser >= 100 {
				t.Errorf("%s: %.1f%% of the roofline's total, %.1f%% of its per-user speed: want (0, 100)", n, lr.PctTotal, lr.PctPerUser)
			}
			t.Logf("%s c=%d: batch %.1f, measured %.0f tok/s (%.1f per user), roofline %.0f (%.1f), %.0f%% / %.0f%%, %s",
				sw.gpu, l.Concurrency, lr.Batch, outTokS, l.PerUserTokS, lr.TotalTokS, lr.PerUserTokS, lr.PctTotal, lr.PctPerUser, lr.Regime)
		}
	}
}
