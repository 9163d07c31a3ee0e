package report

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// The Decision section carries the shape, the ceiling's share of the roofline and its
// cost, the sizing and the what-if rows (predictions labelled), with the Pareto and
// roofline charts; without a decision there is no section.
func TestDecisionSection(t *testing.T) {
	pct, cost, users := 41.0, 2.5, 100.0
	tpot := 0.05
	r := analyze.Run{
		SLO:    analyze.SLO{TPOT: &tpot},
		Levels: []analyze.Level{{Level: 0, Concurrency: 1, OutputTokS: 90}, {Level: 1, Concurrency: 8, OutputTokS: 600}},
		Decision: &analyze.Decision{Shape: "TP 8", GPU: "h100-sxm", GPUs: 8, GPUHourCost: &cost,
			Levels: []analyze.LevelDecision{
				{Level: 0, Concurrency: 1, OutputTokSPerGPU: 11, PerUserTokS: 90, Roofline: &analyze.LevelRoofline{Batch: 1, TotalTokS: 200}},
				{Level: 1, Concurrency: 8, OutputTokSPerGPU: 75, PerUserTokS: 70, Roofline: &analyze.LevelRoofline{Batch: 7.5, TotalTokS: 1500}},
			},
			AtCeiling: &analyze.AtCeiling{Level: 1, Concurrency: 8, GoodputShare: 1, OutputTokS: 600, PctRoofline: &pct, CostPerMOutput: &cost},
			Sizing:    &analyze.Sizing{TargetUsers: &users, TargetRPS: 5, Deployments: 3, GPUs: 24, Headroom: 0.2, PerDeploymentRPS: 2.1, Utilization: 0.79},
			WhatIf:    []analyze.WhatIfRow{{Scenario: "measured"}, {Scenario: "--kv-dtype fp8", Predicted: true, Basis: "KV ceiling from the capacity model"}},
		}}
	b := &chartBuilder{}
	secs := decisionSection(b, []analyze.Run{r}, []string{"run"})
	if len(secs) != 1 || len(secs[0].Charts) != 2 || b.err != nil {
		t.Fatalf("sections %+v, err %v", secs, b.err)
	}
	text := strings.Join(secs[0].Notes, "\n")
	for _, want := range []string{"Shape: TP 8 on 8 × h100-sxm", "41% of the predicted roofline", "$2.500 per million output tokens",
		"3 deployments of 8 GPUs = 24 GPUs", "PREDICTED · --kv-dtype fp8"} {
		if !strings.Contains(text, want) {
			t.Errorf("section lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(string(b.specs[0].Option), "TPOT SLO") {
		t.Error("the Pareto chart does not mark the TPOT SLO")
	}
	if secs := decisionSection(&chartBuilder{}, []analyze.Run{{}}, []string{"run"}); secs != nil {
		t.Errorf("no decision, got %+v", secs)
	}
}
