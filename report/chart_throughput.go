package report

// Throughput against concurrency, with the USL curve and every ceiling marked.

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/ceiling-llm/ceiling/analyze"
)

func throughputChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
	ax = ax.reaching(runs)
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("throughput"),
		charts.WithXAxisOpts(ax.xAxis()),
		charts.WithYAxisOpts(yAxis("Output throughput (tok/s)")))...)
	c.Accept(patchLogBase2(ax))
	for i := range runs {
		r := &runs[i]
		color := runColor(i)
		var ps []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			if onCurve(l) {
				ps = append(ps, pt{levelXValue(l, ax.rate), l.OutputTokS})
			}
		}
		s := lineSeries(seriesName(labels, i, ""), points(ps), color, "solid", true)
		if !ax.rate && i == 0 {
			withMarkLines(&s, verticalMarks(ceilingMarks(runs, labels), ax))
		}
		c.MultiSeries = append(c.MultiSeries, s)
		if f := r.Fit.USL; f != nil && !ax.rate && len(ps) > 0 {
			c.MultiSeries = append(c.MultiSeries, lineSeries(seriesName(labels, i, "USL fit"), points(uslCurve(f, ax)), color, "dashed", false))
		}
	}
	c.MultiSeries = append(c.MultiSeries, throughputOverlays(runs, labels, ax)...)
	c.MultiSeries = append(c.MultiSeries, differenceMarks(b.comparison, labels, "output_tok_s", 1)...)
	caption := "Points are measured levels (vertical bars: 95% bootstrap confidence intervals; hollow grey: invalid levels, excluded from the ceilings and fit and never joined to the line; a level with no completion has no throughput to plot and is left out, see the notes); the dashed curve is the USL fit X(N) = λN / (1 + σ(N−1) + κN(N−1)) over the tested range. Vertical lines mark every ceiling (the solid one is the realistic ceiling); the axis extends past the sweep to show a ceiling beyond it, and one too far out is marked at the edge with an arrow."
	if len(runs) > 1 {
		caption += " A line has its run's colour; grey where several runs' ceilings coincide."
	}
	return b.add(c, "", "", "tok/s", "Output throughput vs concurrency", caption, true, 420)
}

// ceilingMarks marks every ceiling of every run; the realistic one is drawn solid.
// Several runs share the chart, so their marks are merged together.
func ceilingMarks(runs []analyze.Run, labels []string) []mark {
	var out []mark
	multi := len(runs) > 1
	for i := range runs {
		r := &runs[i]
		// Several runs: a mark takes its run's colour (a run's name would make the
		// label too long to fit beside its line).
		prefix := ""
		lineColor := func(kind string) string {
			if multi {
				return runColor(i)
			}
			switch kind {
			case "ceiling":
				return "#B00020"
			case "kv":
				return "#7B3294"
			case "batch":
				return "#1B7837"
			case "slo":
				return "#C2185B"
			}
			return "#555555"
		}
		bind := r.Ceiling.Binding
		if c := r.Ceiling.Concurrency; c != nil {
			text := "ceiling " + fmtConc(*c)
			if bind != "" {
				text += " (" + bindingName(bind) + ")"
			}
			out = append(out, mark{x: *c, text: prefix + text, color: lineColor("ceiling"), solid: true})
		}
		add := func(kind string, v *float64, name string) {
			if v == nil || !finite(*v) {
				return
			}
			if kind == bind && r.Ceiling.Concurrency != nil && math.Abs(*r.Ceiling.Concurrency-*v) < 1e-9 {
				return // already drawn as the realistic ceiling
			}
			out = append(out, mark{x: *v, text: prefix + name + " " + fmtConc(*v), color: lineColor(kind)})
		}
		add("kv", r.Ceilings.KV, "KV")
		add("batch", r.Ceilings.Batch, "batch")
		add("knee", r.Ceilings.Knee, "knee")
		add("slo", r.Ceilings.SLO, "SLO")
		add("errors", r.Ceilings.Errors, "errors")
	}
	return out
}

func uslCurve(f *analyze.USLFit, ax axis) []pt {
	lo, hi := ax.min, ax.max
	if !(lo > 0) || math.IsInf(lo, 0) {
		return nil
	}
	const n = 48
	out := make([]pt, 0, n+1)
	for i := 0; i <= n; i++ {
		var x float64
		if ax.log {
			x = lo * math.Pow(hi/lo, float64(i)/n)
		} else {
			x = lo + (hi-lo)*float64(i)/n
		}
		// Below N = 1 the law's denominator can reach 0 or less, which makes X(N)
		// infinite, NaN or negative (signed zero included): no point there.
		y := f.Throughput(x)
		if math.IsNaN(y) || math.IsInf(y, 0) || math.Signbit(y) {
			continue
		}
		out = append(out, pt{x, y})
	}
	return out
}
