package analysistext

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
)

// writeDecision writes the decision section of a run: each level against its
// roofline and in cost terms, then the ceiling's cost and the sizing. Predictions
// (the roofline, the what-if rows) are labelled as such.
func writeDecision(b *strings.Builder, r *analyze.Run, md bool) {
	d := r.Decision
	if d == nil {
		return
	}
	heading(b, md, 2, "Decision")
	if d.GPU == "" {
		fmt.Fprintf(b, "shape: %s, GPU not declared (--gpu, --gpus)\n", d.Shape)
	} else {
		fmt.Fprintf(b, "shape: %s on %d × %s\n", d.Shape, d.GPUs, d.GPU)
	}
	t := &table{head: []string{"level", "offered", "out tok/s/GPU", "user tok/s", "$/M out", "$/M total", "roofline tok/s (predicted)", "% of roofline", "regime"}}
	for i, ld := range d.Levels {
		row := []string{fmt.Sprint(ld.Level), offeredLabel(r.Levels[i]), numCell(ld.OutputTokSPerGPU, 1), numCell(ld.PerUserTokS, 1),
			optCell(ld.CostPerMOutput, 3), optCell(ld.CostPerMTotal, 3)}
		if lr := ld.Roofline; lr != nil {
			row = append(row, numCell(lr.TotalTokS, 0), numCell(lr.PctTotal, 0)+"%", lr.Regime)
		} else {
			row = append(row, "—", "—", "—")
		}
		t.rows = append(t.rows, row)
	}
	if err := t.write(b, md); err != nil {
		return
	}
	if a := d.AtCeiling; a != nil {
		// The best valid level at or below the realistic ceiling: with a noisy sweep
		// it need not be the level at the ceiling itself.
		within := fmt.Sprintf("within the SLOs (%.0f%% of requests)", a.GoodputShare*100)
		if r.SLO.TTFT == nil && r.SLO.TPOT == nil && r.SLO.E2E == nil {
			within = "(no SLO set)"
		}
		line := fmt.Sprintf("best level up to the ceiling (level %d, offered %g): %.1f output tok/s %s", a.Level, a.Concurrency, a.OutputTokS, within)
		if a.PctRoofline != nil {
			line += fmt.Sprintf(", %.0f%% of the roofline", *a.PctRoofline)
		}
		if a.CostPerMOutput != nil {
			line += fmt.Sprintf(", $%.3f per million output tokens", *a.CostPerMOutput)
			if a.CostPerMTotal != nil {
				line += fmt.Sprintf(" ($%.3f per million prompt+output)", *a.CostPerMTotal)
			}
		}
		fmt.Fprintln(b, line)
		if e := a.Energy; e != nil {
			fmt.Fprintln(b, energyLine(e))
		}
	}
	if s := d.Sizing; s != nil {
		load := fmt.Sprintf("%.2f requests/s", s.TargetRPS)
		if s.TargetUsers != nil {
			load = fmt.Sprintf("%g users thinking %gs (%.2f requests/s)", *s.TargetUsers, s.ThinkTimeS, s.TargetRPS)
		}
		fmt.Fprintf(b, "for %s: %d deployments of %d GPUs = %d GPUs, each serving %.2f requests/s at the ceiling, sized with %.0f%% headroom (%.0f%% load)\n",
			load, s.Deployments, d.GPUs, s.GPUs, s.PerDeploymentRPS, s.Headroom*100, s.Utilization*100)
	}
	if len(d.WhatIf) > 0 {
		w := &table{head: []string{"what-if", "", "shape", "KV tokens", "KV ceiling", "per cache at max len", "ceiling", "out tok/s"}}
		for _, row := range d.WhatIf {
			kind := "measured"
			if row.Predicted {
				kind = "PREDICTED"
			}
			w.rows = append(w.rows, []string{row.Scenario, kind, row.Shape, groupDigits(row.KVCapacityTokens), numCell(row.KVCeiling, 1),
				optCell(row.AtMaxModelLen, 2), optCell(row.Ceiling, 1), optCell(row.OutputTokS, 0)})
		}
		b.WriteString("\n")
		_ = w.write(b, md)
		for _, row := range d.WhatIf {
			if row.Predicted {
				fmt.Fprintf(b, "basis (%s): %s\n", row.Scenario, row.Basis)
			}
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
	b.WriteString("\n")
}

// energyLine is the ceiling's power and energy in one line of the text output.
func energyLine(e *analyze.LevelEnergy) string {
	line := "GPU power there:"
	if e.PowerPerGPUW != nil {
		line += fmt.Sprintf(" %.0f W per GPU", *e.PowerPerGPUW)
	}
	if e.JPerOutputToken != nil {
		line += fmt.Sprintf(", %.3g J per output token", *e.JPerOutputToken)
	}
	if e.JPerRequest != nil {
		line += fmt.Sprintf(", %.3g J per request", *e.JPerRequest)
	}
	if e.EnergyCostPerMOutput != nil {
		line += fmt.Sprintf("; energy $%.4f per million output tokens at PUE %.2f", *e.EnergyCostPerMOutput, e.PUE)
		if e.EnergyShare != nil {
			line += fmt.Sprintf(" (%.0f%% of GPU-hours + energy)", *e.EnergyShare*100)
		}
	}
	return line
}
