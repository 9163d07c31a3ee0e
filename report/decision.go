package report

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// The "Decision" section: the run in deployment terms (shape, share of the roofline at
// the ceiling, cost per million tokens at the SLOs, replicas for the target load, the
// what-if predictions), with the Pareto view and the measured curve under its
// roofline. Predictions are labelled as such in every line and series name.

// decisionSection builds the section, or nothing when no run carries a decision. A
// run whose deployment was not declared (no GPU, GPU count, cost, roofline or target
// load) has nothing to add to the charts below: tokens per GPU would be the total and
// the Pareto view the interactivity chart turned on its side. The section then says in
// one line what it needs instead of printing figures that count one unnamed GPU.
func decisionSection(b *chartBuilder, runs []analyze.Run, labels []string) []section {
	sec := section{ID: "decision", Title: "Decision",
		Intro: "The measured sweep in deployment terms: tokens per GPU against what one user sees, how close each level comes to the hardware's roofline (a prediction from datasheet bandwidth and FLOP/s), the cost at the SLOs and the replicas a target load needs."}
	var declared []analyze.Run
	var declaredLabels []string
	bare := 0
	for i := range runs {
		d := runs[i].Decision
		if d == nil {
			continue
		}
		if undeclared(d) {
			bare++
			if len(runs) > 1 {
				sec.Notes = append(sec.Notes, labels[i]+": no deployment declared.")
			}
			continue
		}
		declared = append(declared, runs[i])
		declaredLabels = append(declaredLabels, labels[i])
		prefix := ""
		if len(runs) > 1 {
			prefix = labels[i] + ": "
		}
		for _, l := range decisionLines(&runs[i]) {
			sec.Notes = append(sec.Notes, prefix+l)
		}
	}
	energy := energyCharts(b, runs, labels)
	for i := range runs {
		if runs[i].Decision != nil && undeclared(runs[i].Decision) {
			prefix := ""
			if len(runs) > 1 {
				prefix = labels[i] + ": "
			}
			for _, l := range energyLines(&runs[i]) {
				sec.Notes = append(sec.Notes, prefix+l)
			}
		}
	}
	if bare == 0 && len(declared) == 0 {
		if len(energy) == 0 {
			return nil
		}
		sec.Charts = energy
		return []section{sec}
	}
	if bare > 0 {
		if len(declared) == 0 && len(energy) == 0 {
			sec.Intro = ""
			sec.Notes = nil
		}
		sec.Notes = append(sec.Notes, needsLine)
	}
	if len(declared) == 0 {
		sec.Charts = append(sec.Charts, energy...)
		return []section{sec}
	}
	sec.Charts = append(sec.Charts, paretoChart(b, declared, declaredLabels))
	if cv, ok := rooflineChart(b, declared, declaredLabels); ok {
		sec.Charts = append(sec.Charts, cv)
	}
	sec.Charts = append(sec.Charts, energy...)
	return []section{sec}
}

// needsLine is what the section says for a run recorded without its deployment.
const needsLine = "No deployment declared, so no figures per GPU, share of the roofline, cost or replicas: " +
	"give --gpu and --gpus (with --model-config for the roofline), --gpu-hour-cost for the cost per million tokens, " +
	"and --target-rps or --target-users for the replicas a load needs. The measured trade-off of total against per-user speed is the interactivity chart below."

// undeclared reports whether a decision knows nothing of the deployment beyond one
// GPU: no GPU named, at most one GPU, no cost, roofline, sizing or what-if.
func undeclared(d *analyze.Decision) bool {
	return d.GPU == "" && d.GPUs <= 1 && d.GPUHourCost == nil && d.Roofline == nil && d.Sizing == nil && len(d.WhatIf) == 0
}

// decisionLines are the section's sentences for one run.
func decisionLines(r *analyze.Run) []string {
	d := r.Decision
	gpu := d.GPU
	if gpu == "" {
		gpu = "GPUs not named"
	}
	lines := []string{fmt.Sprintf("Shape: %s on %d × %s.", d.Shape, d.GPUs, gpu)}
	if a := d.AtCeiling; a != nil {
		within := fmt.Sprintf("within the SLOs (%.0f%% of requests)", a.GoodputShare*100)
		if r.SLO.TTFT == nil && r.SLO.TPOT == nil && r.SLO.E2E == nil {
			within = "(no SLO set: every successful request counts)"
		}
		s := fmt.Sprintf("At the ceiling (level %d, concurrency %g): %.1f output tok/s %s, %.1f per GPU",
			a.Level, a.Concurrency, a.OutputTokS, within, a.OutputTokS/float64(max(d.GPUs, 1)))
		if a.PctRoofline != nil {
			s += fmt.Sprintf(", %.0f%% of the predicted roofline", *a.PctRoofline)
		}
		lines = append(lines, s+".")
		if a.CostPerMOutput != nil {
			s := fmt.Sprintf("Cost at the SLOs: $%.3f per million output tokens", *a.CostPerMOutput)
			if a.CostPerMTotal != nil {
				s += fmt.Sprintf(", $%.3f per million prompt+output tokens", *a.CostPerMTotal)
			}
			lines = append(lines, fmt.Sprintf("%s (at $%.2f per GPU-hour).", s, *d.GPUHourCost))
		}
		lines = append(lines, energyLines(r)...)
	}
	if s := d.Sizing; s != nil {
		load := fmt.Sprintf("%.2f requests/s", s.TargetRPS)
		if s.TargetUsers != nil {
			load = fmt.Sprintf("%g users with %gs think time (%.2f requests/s)", *s.TargetUsers, s.ThinkTimeS, s.TargetRPS)
		}
		lines = append(lines, fmt.Sprintf("For %s: %d deployments of %d GPUs = %d GPUs, each serving %.2f requests/s at the ceiling, %.0f%% headroom kept (%.0f%% load).",
			load, s.Deployments, d.GPUs, s.GPUs, s.PerDeploymentRPS, s.Headroom*100, s.Utilization*100))
	}
	for _, w := range d.WhatIf {
		kind := "Measured"
		if w.Predicted {
			kind = "PREDICTED"
		}
		s := fmt.Sprintf("What-if · %s · %s: %s, KV %d tokens, KV ceiling %.1f", kind, w.Scenario, w.Shape, w.KVCapacityTokens, w.KVCeiling)
		if w.Ceiling != nil {
			s += fmt.Sprintf(", ceiling %.1f", *w.Ceiling)
		}
		if w.OutputTokS != nil {
			s += fmt.Sprintf(", %.0f output tok/s", *w.OutputTokS)
		}
		if w.Predicted {
			s += " (" + w.Basis + ")"
		}
		lines = append(lines, s+".")
	}
	return append(lines, d.Notes...)
}

// paretoChart is total output tok/s per GPU against per-user tok/s across the levels,
// the axes InferenceX and vLLM's sweep plots use; the TPOT SLO marks the region where
// each user gets at least 1/TPOT tokens per second.
func paretoChart(b *chartBuilder, runs []analyze.Run, labels []string) chartView {
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("pareto"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Per-user output speed (tok/s)", NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Output tok/s per GPU")))...)
	// Headroom above the top point, for its label (below the axis name).
	c.Accept(optionPatch{fn: func(m map[string]interface{}) {
		if ys, ok := m["yAxis"].([]opts.YAxis); ok && len(ys) > 0 {
			m["yAxis"] = []map[string]interface{}{{"type": "value", "name": ys[0].Name, "boundaryGap": []string{"0", "18%"}}}
		}
	}})
	xr, yr := decisionRange(runs, func(ld analyze.LevelDecision) float64 { return ld.PerUserTokS }),
		decisionRange(runs, func(ld analyze.LevelDecision) float64 { return ld.OutputTokSPerGPU })
	var shown []labelled
	for i := range runs {
		d := runs[i].Decision
		if d == nil {
			continue
		}
		var data []interface{}
		for _, ld := range d.Levels {
			if !finite(ld.PerUserTokS) || !finite(ld.OutputTokSPerGPU) || ld.PerUserTokS <= 0 {
				continue
			}
			p := pt{ld.PerUserTokS, ld.OutputTokSPerGPU}
			text := fmtInt(int64(ld.Concurrency))
			var item interface{} = []interface{}{roundSig(ld.PerUserTokS, 4), roundSig(ld.OutputTokSPerGPU, 5), ld.Concurrency}
			if crowded(p, text, shown, xr, yr) {
				// Saturated levels sit on top of each other: label the first only.
				item = map[string]interface{}{"value": item, "label": map[string]bool{"show": false}}
			} else {
				shown = append(shown, labelled{p, text})
			}
			data = append(data, item)
		}
		s := lineSeries(seriesName(labels, i, "measured"), data, runColor(i), "solid", true)
		s.Label = &opts.Label{Show: opts.Bool(true), Formatter: "{@[2]}", Position: "top", Color: "#444", FontSize: smallFontSize}
		s.LabelLayout = &opts.LabelLayout{HideOverlap: opts.Bool(true)}
		if t := runs[i].SLO.TPOT; t != nil && *t > 0 {
			withMarkLines(&s, []markLine{vline(1 / *t, fmt.Sprintf("TPOT SLO: ≥ %.0f tok/s per user →", 1 / *t), "#B2182B", "dashed", 1.5)})
		}
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "Each point is a level, labelled with its concurrency where the label has room. Up is cheaper tokens, right is faster for each user; the dashed line is the TPOT SLO, and only points to its right serve within it."
	return b.add(c, "", "tok/s", "tok/s", "Pareto: tokens per GPU vs per-user speed", caption, false, 360)
}

// decisionRange is the span of get over the decision levels of every run (1 when
// empty or flat), for crowded.
func decisionRange(runs []analyze.Run, get func(analyze.LevelDecision) float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range runs {
		if d := runs[i].Decision; d != nil {
			for _, ld := range d.Levels {
				if v := get(ld); finite(v) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
	}
	if !(hi > lo) {
		return 1
	}
	return hi - lo
}

// rooflineChart puts each level's measured output tok/s beside the predicted roofline
// at the batch it ran.
func rooflineChart(b *chartBuilder, runs []analyze.Run, labels []string) (chartView, bool) {
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("roofline"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Requests in decode (measured batch)", NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Output tok/s")))...)
	found := false
	for i := range runs {
		d := runs[i].Decision
		if d == nil {
			continue
		}
		var meas, roof []interface{}
		for j, ld := range d.Levels {
			lr := ld.Roofline
			if lr == nil {
				continue
			}
			found = true
			meas = append(meas, []interface{}{roundSig(lr.Batch, 4), roundSig(runs[i].Levels[j].OutputTokS, 5)})
			roof = append(roof, []interface{}{roundSig(lr.Batch, 4), roundSig(lr.TotalTokS, 5)})
		}
		c.MultiSeries = append(c.MultiSeries,
			lineSeries(seriesName(labels, i, "measured"), meas, runColor(i), "solid", true),
			lineSeries(seriesName(labels, i, "roofline (predicted)"), roof, runColor(i), "dashed", false))
	}
	if !found {
		return chartView{}, false
	}
	caption := "Solid: measured output throughput; dashed: the roofline at the same batch (HBM bandwidth, peak FLOP/s and all-reduce time from the datasheets and stated assumptions). The gap is what prefill, scheduling and kernels cost."
	return b.add(c, "", "requests", "tok/s", "Measured vs roofline", caption, false, 360), true
}
