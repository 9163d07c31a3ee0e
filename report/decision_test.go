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

// A run recorded without its deployment gets one line saying what the section needs,
// not per-GPU figures of one unnamed GPU nor a second copy of the interactivity chart.
func TestDecisionSectionUndeclared(t *testing.T) {
	bare := analyze.Run{
		Levels: []analyze.Level{{Level: 0, Concurrency: 1, OutputTokS: 43}, {Level: 1, Concurrency: 4, OutputTokS: 91}},
		Decision: &analyze.Decision{Shape: "TP 1", GPUs: 1,
			Levels:    []analyze.LevelDecision{{Level: 0, Concurrency: 1, OutputTokSPerGPU: 43, PerUserTokS: 48}, {Level: 1, Concurrency: 4, OutputTokSPerGPU: 91, PerUserTokS: 30}},
			AtCeiling: &analyze.AtCeiling{Level: 1, Concurrency: 4, GoodputShare: 1, OutputTokS: 91},
			Notes:     []string{"no --gpus given: per-GPU figures and costs count one GPU"}}}
	b := &chartBuilder{}
	secs := decisionSection(b, []analyze.Run{bare}, []string{"run"})
	if len(secs) != 1 || len(secs[0].Charts) != 0 || len(b.specs) != 0 {
		t.Fatalf("want one section without charts, got %+v (%d specs)", secs, len(b.specs))
	}
	if got := secs[0].Notes; len(got) != 1 || got[0] != needsLine {
		t.Errorf("notes %q, want only the line saying what is needed", got)
	}
	for _, flag := range []string{"--gpu ", "--gpus", "--model-config", "--gpu-hour-cost", "--target-rps"} {
		if !strings.Contains(needsLine, flag) {
			t.Errorf("the line does not name %s", flag)
		}
	}

	// Beside a declared run, the bare one is named and the charts show the declared only.
	named := bare
	d := *bare.Decision
	d.GPU, d.GPUs = "h100-sxm", 2
	named.Decision = &d
	b = &chartBuilder{}
	secs = decisionSection(b, []analyze.Run{named, bare}, []string{"a", "b"})
	text := strings.Join(secs[0].Notes, "\n")
	for _, want := range []string{"a: Shape: TP 1 on 2 × h100-sxm", "b: no deployment declared.", needsLine, "no SLO set"} {
		if !strings.Contains(text, want) {
			t.Errorf("section lacks %q:\n%s", want, text)
		}
	}
	if len(secs[0].Charts) != 1 || strings.Contains(string(b.specs[0].Option), `"b · measured"`) {
		t.Errorf("want the Pareto chart of run a only: %d charts, %s", len(secs[0].Charts), b.specs[0].Option)
	}
}

// Levels that sit on top of each other in the Pareto view (a saturated server) get
// one label, as in the interactivity chart (the same crowded rule, and echarts hides
// what still overlaps); the others keep theirs.
func TestParetoLabelsCrowded(t *testing.T) {
	r := analyze.Run{Decision: &analyze.Decision{GPU: "h100-sxm", GPUs: 1, Levels: []analyze.LevelDecision{
		{Concurrency: 1, PerUserTokS: 48.5, OutputTokSPerGPU: 43}, {Concurrency: 2, PerUserTokS: 31.9, OutputTokSPerGPU: 51.5},
		{Concurrency: 4, PerUserTokS: 29.8, OutputTokSPerGPU: 91.3}, {Concurrency: 8, PerUserTokS: 29.1, OutputTokSPerGPU: 88.5},
		{Concurrency: 16, PerUserTokS: 29.2, OutputTokSPerGPU: 90.4}}}}
	b := &chartBuilder{}
	paretoChart(b, []analyze.Run{r}, []string{"run"})
	opt := string(b.specs[0].Option)
	// The sample's levels: 16 sits on 4 (0.6 tok/s right, 0.9 tok/s down); 8 is
	// 14 px below 4 on the narrowest plot, clear of its label.
	if n := strings.Count(opt, `"label":{"show":false}`); n != 1 || !strings.Contains(opt, `{"label":{"show":false},"value":[29.2,90.4,16]}`) {
		t.Errorf("%d point labels hidden, want only concurrency 16's:\n%s", n, opt)
	}
	if !strings.Contains(opt, `"hideOverlap":true`) || strings.Contains(opt, `"fontSize":10`) {
		t.Errorf("point labels without hideOverlap or below the report's smallest size:\n%s", opt)
	}
}
