package report

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// The planner predictions (analyze.PredictionCheck) drawn over the measured curves:
// tokens per GPU against per-user speed and against concurrency, the predicted
// points red diamonds named PREDICTED, with the per-point errors and the flags
// in words; and the runs compared at the same per-user speed (analyze.MatchedSpeed).

// predictedColor draws every predicted point, apart from the runs' colours.
const predictedColor = "#B2182B"

func predictedSections(b *chartBuilder, a *analyze.Analysis, labels []string) []section {
	var secs []section
	seen := map[string]bool{}
	for _, pc := range a.Predictions {
		if seen[pc.Source] {
			continue
		}
		seen[pc.Source] = true
		sec := section{ID: fmt.Sprintf("predicted-%d", len(secs)), Title: "PREDICTED by " + pc.Planner + " beside the measured runs",
			Intro: fmt.Sprintf("A planner's predictions (%s), never measurements, set over the measured curves at the same concurrency. Error = (predicted − measured) ÷ measured; measured per-GPU figures divide by %s (%s).", pc.Source, gpusText(pc.MeasuredGPUs), pc.GPUsBasis)}
		sec.Charts = append(sec.Charts, predictedChart(b, a, labels, pc, true), predictedChart(b, a, labels, pc, false))
		for _, c := range a.Predictions {
			if c.Source != pc.Source {
				continue
			}
			prefix := ""
			if len(a.Runs) > 1 {
				prefix = c.MeasuredRun + ": "
			}
			for _, p := range c.Points {
				sec.Notes = append(sec.Notes, prefix+pointLine(p))
			}
			if c.MedianAbsErrPct != nil {
				sec.Notes = append(sec.Notes, fmt.Sprintf("%smedian absolute error of the predicted tok/s per GPU: %.0f%%.", prefix, *c.MedianAbsErrPct))
			}
			for _, f := range c.Flags {
				sec.Notes = append(sec.Notes, prefix+"FLAG: "+f+".")
			}
			for _, n := range c.Notes {
				sec.Notes = append(sec.Notes, prefix+"Note: "+n+".")
			}
		}
		secs = append(secs, sec)
	}
	if m := a.MatchedSpeed; m != nil {
		sec := section{ID: "matched-speed", Title: "At the same per-user speed",
			Intro: "The deployments compared at the service level a user gets rather than at the same concurrency: " + m.Method + "."}
		for i, s := range m.Speeds {
			line := fmt.Sprintf("At %s tok/s per user:", fmtFloat(s))
			for _, c := range m.Curves {
				v := "not reached"
				if x := c.OutputTokSPerGPU[i]; x != nil {
					v = fmt.Sprintf("%s tok/s per GPU", fmtFloat(*x))
					if cost := c.CostPerMOutput[i]; cost != nil {
						v += fmt.Sprintf(" ($%.3f per million output tokens)", *cost)
					}
				}
				line += fmt.Sprintf(" %s %s;", c.Name, v)
			}
			sec.Notes = append(sec.Notes, line[:len(line)-1]+".")
		}
		if m.GPUHourCost == nil {
			sec.Notes = append(sec.Notes, "No --gpu-hour-cost given: no cost per million tokens.")
		} else {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Costs at $%.2f per GPU-hour for every deployment.", *m.GPUHourCost))
		}
		secs = append(secs, sec)
	}
	return secs
}

// pointLine is one predicted point in words.
func pointLine(p analyze.PointCheck) string {
	s := fmt.Sprintf("PREDICTED c=%s (%s): %s tok/s per GPU", fmtFloat(p.Concurrency), p.Label, optFloat(p.Predicted.OutputTokSPerGPU))
	if p.Predicted.PerUserTokS != nil {
		s += fmt.Sprintf(", %s tok/s per user", fmtFloat(*p.Predicted.PerUserTokS))
	}
	if p.Measured.OutputTokSPerGPU == nil {
		return s + "; " + p.MeasuredAt + "."
	}
	s += fmt.Sprintf("; measured %s tok/s per GPU", fmtFloat(*p.Measured.OutputTokSPerGPU))
	if p.Measured.PerUserTokS != nil {
		s += fmt.Sprintf(", %s per user", fmtFloat(*p.Measured.PerUserTokS))
	}
	s += " (" + p.MeasuredAt + ")"
	for _, e := range []struct {
		name string
		v    *float64
	}{{"tok/s per GPU", p.ErrPct.OutputTokSPerGPU}, {"per-user speed", p.ErrPct.PerUserTokS}, {"TTFT", p.ErrPct.TTFT}, {"TPOT", p.ErrPct.TPOT}} {
		if e.v != nil {
			s += fmt.Sprintf("; error in %s %+.0f%%", e.name, *e.v)
		}
	}
	return s + "."
}

func optFloat(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmtFloat(*v)
}

func fmtFloat(v float64) string {
	if v >= 100 || v == float64(int64(v)) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// predictedChart draws the measured runs' tok/s per GPU (against per-user speed
// when paretoView, else against concurrency) and the prediction's points over them.
func predictedChart(b *chartBuilder, a *analyze.Analysis, labels []string, pc analyze.PredictionCheck, paretoView bool) chartView {
	c := charts.NewLine()
	xName := "Concurrency"
	if paretoView {
		xName = "Per-user output speed (tok/s)"
	}
	c.SetGlobalOptions(append(baseOpts("predicted"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: xName, NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Output tok/s per GPU")))...)
	for i := range a.Runs {
		r := &a.Runs[i]
		var data []interface{}
		for j, l := range r.Levels {
			if !l.Valid || l.OutputTokS <= 0 {
				continue
			}
			y := l.OutputTokS / float64(max(pc.MeasuredGPUs, 1))
			if r.Decision != nil && j < len(r.Decision.Levels) {
				y = r.Decision.Levels[j].OutputTokSPerGPU
			}
			x := float64(l.Concurrency)
			if paretoView {
				x = l.PerUserTokS
			}
			data = append(data, []interface{}{roundSig(x, 4), roundSig(y, 5)})
		}
		c.MultiSeries = append(c.MultiSeries, lineSeries(seriesName(labels, i, "measured"), data, runColor(i), "solid", true))
	}
	var data []interface{}
	for _, p := range pc.Points {
		if p.Predicted.OutputTokSPerGPU == nil {
			continue
		}
		x := p.Concurrency
		if paretoView {
			if p.Predicted.PerUserTokS == nil {
				continue
			}
			x = *p.Predicted.PerUserTokS
		}
		data = append(data, []interface{}{roundSig(x, 4), roundSig(*p.Predicted.OutputTokSPerGPU, 5)})
	}
	s := charts.SingleSeries{Name: "PREDICTED (" + pc.Planner + ")", Type: "scatter", Data: data, Animation: opts.Bool(false),
		Symbol: "diamond", SymbolSize: 12, ItemStyle: &opts.ItemStyle{Color: predictedColor, BorderColor: "#fff"}}
	c.MultiSeries = append(c.MultiSeries, s)
	title := "PREDICTED over measured: tokens per GPU vs concurrency"
	caption := "Measured levels (lines, valid levels only) and the planner's predicted points (red diamonds) at the concurrency each predicts."
	if paretoView {
		title = "PREDICTED over measured: tokens per GPU vs per-user speed"
		caption = "Up is cheaper tokens, right is faster for each user. A predicted point far above the measured curve at its speed is a prediction the measured deployment did not reach."
	}
	return b.add(c, "", "tok/s", "tok/s", title, caption, false, 360)
}

func gpusText(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
