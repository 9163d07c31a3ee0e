package report

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// A run with GPU telemetry gets the power/energy panel in the Decision section, W
// per GPU and J per output token against concurrency, and the ceiling's power,
// energy and energy cost in its lines, whether or not the deployment was declared.
func TestDecisionEnergyPanel(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	energy := &analyze.LevelEnergy{PowerPerGPUW: f(612), JPerOutputToken: f(0.417), JPerRequest: f(53.4),
		EnergyCostPerMOutput: f(0.0139), EnergyShare: f(0.0055), PUE: 1.2}
	for _, declared := range []bool{true, false} {
		cost := 2.5
		d := &analyze.Decision{Shape: "TP 1", GPUs: 1,
			Levels:    []analyze.LevelDecision{{Level: 0, Concurrency: 1, Energy: energy}, {Level: 1, Concurrency: 8, Energy: energy}},
			AtCeiling: &analyze.AtCeiling{Level: 1, Concurrency: 8, GoodputShare: 1, OutputTokS: 600, Energy: energy}}
		if declared {
			d.GPU, d.GPUs, d.GPUHourCost, d.AtCeiling.CostPerMOutput = "h100-sxm", 8, &cost, &cost
		}
		r := analyze.Run{
			Levels: []analyze.Level{
				{Level: 0, Concurrency: 1, OutputTokS: 90, GPU: &analyze.GPUTelemetry{GPUs: 8, PowerPerGPUW: f(301), JPerOutputToken: f(26.7)}},
				{Level: 1, Concurrency: 8, OutputTokS: 600, GPU: &analyze.GPUTelemetry{GPUs: 8, PowerPerGPUW: f(612), JPerOutputToken: f(0.417)}},
			},
			Decision: d}
		b := &chartBuilder{}
		secs := decisionSection(b, []analyze.Run{r}, []string{"run"})
		if len(secs) != 1 || b.err != nil {
			t.Fatalf("declared %v: sections %+v, err %v", declared, secs, b.err)
		}
		var titles []string
		for _, c := range secs[0].Charts {
			titles = append(titles, c.Title)
		}
		if got := strings.Join(titles, "|"); !strings.Contains(got, "GPU power per GPU|Energy per output token") {
			t.Errorf("declared %v: charts %q, want the power and energy panel", declared, got)
		}
		var opt string
		for _, s := range b.specs {
			opt += string(s.Option)
		}
		if !strings.Contains(opt, "[8,612]") || !strings.Contains(opt, "[1,26.7]") {
			t.Errorf("declared %v: the panel does not plot the levels' W/GPU and J/token: %s", declared, opt)
		}
		text := strings.Join(secs[0].Notes, "\n")
		for _, want := range []string{"612 W per GPU", "0.417 J per output token", "53.4 J per request", "$0.0139 per million output tokens (PUE 1.20)"} {
			if !strings.Contains(text, want) {
				t.Errorf("declared %v: section lacks %q:\n%s", declared, want, text)
			}
		}
		if declared && !strings.Contains(text, "energy is 1% of the two") {
			t.Errorf("declared: no energy share beside the GPU-hour cost:\n%s", text)
		}
	}
}
