package report

// Latency percentiles, per-user against total throughput, and effective concurrency.

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

// hasSummary reports whether any level has a median for the latency get picks.
func hasSummary(runs []analyze.Run, get func(*analyze.Level) analyze.Summary) bool {
	for i := range runs {
		for j := range runs[i].Levels {
			if get(&runs[i].Levels[j]).P50 != nil {
				return true
			}
		}
	}
	return false
}

func latencyChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis, title, yName, unit string, scale float64,
	get func(*analyze.Level) analyze.Summary, slo func(analyze.SLO) *float64) chartView {
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts(title),
		charts.WithXAxisOpts(ax.xAxis()),
		charts.WithYAxisOpts(yAxis(yName)))...)
	c.Accept(patchLogBase2(ax))
	seen := map[float64]bool{}
	for i := range runs {
		r := &runs[i]
		var p50, p99 []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			s := get(l)
			x := levelXValue(l, ax.rate)
			if !onCurve(l) {
				continue // marked apart by latencyOverlays
			}
			if s.P50 != nil {
				p50 = append(p50, pt{x, *s.P50 * scale})
			}
			if s.P99 != nil {
				p99 = append(p99, pt{x, *s.P99 * scale})
			}
		}
		s50 := lineSeries(seriesName(labels, i, "p50"), points(p50), runColor(i), "solid", true)
		s99 := lineSeries(seriesName(labels, i, "p99"), points(p99), runColor(i), "dashed", true)
		s99.Symbol = "triangle"
		if v := slo(r.SLO); v != nil && !seen[*v] {
			seen[*v] = true
			withMarkLines(&s50, []markLine{hline(*v*scale, "SLO "+fmtDur(*v), "#B00020", "solid")})
		}
		c.MultiSeries = append(c.MultiSeries, s50, s99)
	}
	ttft := yName == "TTFT (s)"
	c.MultiSeries = append(c.MultiSeries, latencyOverlays(runs, labels, ax, get, scale, ttft)...)
	c.MultiSeries = append(c.MultiSeries, latencyDifferenceMarks(b.comparison, labels, title, scale)...)
	caption := "Hollow grey markers: invalid levels."
	if ttft {
		caption = "Vertical bars: 95% bootstrap confidence intervals of p50 and p99. " + caption
	}
	return b.add(c, "", "", unit, title+" vs concurrency", caption, false, 340)
}

func perUserChart(b *chartBuilder, runs []analyze.Run, labels []string) chartView {
	xr, yr := dataRange(runs, func(l *analyze.Level) float64 { return l.OutputTokS }), dataRange(runs, func(l *analyze.Level) float64 { return l.PerUserTokS })
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("per-user"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Total output throughput (tok/s)", Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Per-user output speed (tok/s)")))...)
	// Headroom above the top point, for its label (below the axis name).
	c.Accept(optionPatch{fn: func(m map[string]interface{}) {
		if ys, ok := m["yAxis"].([]opts.YAxis); ok && len(ys) > 0 {
			m["yAxis"] = []map[string]interface{}{{"type": "value", "name": ys[0].Name, "boundaryGap": []string{"0", "18%"}}}
		}
	}})
	var shown []labelled
	for i := range runs {
		r := &runs[i]
		var data []interface{}
		for j := range r.Levels {
			l := &r.Levels[j]
			if !finite(l.OutputTokS) || !finite(l.PerUserTokS) || !completed(l) {
				continue // a level without a completion measured no speed (not 0, 0)
			}
			p := pt{l.OutputTokS, l.PerUserTokS}
			var item interface{} = []interface{}{roundSig(l.OutputTokS, 5), roundSig(l.PerUserTokS, 4), levelX(l)}
			if crowded(p, levelX(l), shown, xr, yr) {
				// Saturated levels sit on top of each other: label the first only.
				item = map[string]interface{}{"value": item, "label": map[string]bool{"show": false}}
			} else {
				shown = append(shown, labelled{p, levelX(l)})
			}
			data = append(data, item)
		}
		s := lineSeries(seriesName(labels, i, ""), data, runColor(i), "solid", true)
		s.Label = &opts.Label{Show: opts.Bool(true), Formatter: "{@[2]}", Position: "top", Color: "#444", FontSize: smallFontSize}
		// Levels crowd where throughput saturates: echarts hides a level label that
		// would overlap another (the tooltip still names every point).
		s.LabelLayout = &opts.LabelLayout{HideOverlap: opts.Bool(true)}
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "Each point is a level, labelled with its concurrency where the label has room: moving right buys total throughput, moving down costs each user speed."
	return b.add(c, "peruser", "tok/s", "tok/s", "Interactivity vs throughput", caption, false, 360)
}

func effectiveChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
	ax = ax.reaching(runs)
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("effective"),
		charts.WithXAxisOpts(ax.xAxis()),
		charts.WithYAxisOpts(yAxis("Effective concurrency (requests)")))...)
	c.Accept(patchLogBase2(ax))
	for i := range runs {
		r := &runs[i]
		var dec, wait []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			x := levelXValue(l, ax.rate)
			dec = append(dec, pt{x, l.DecodeConcurrency})
			wait = append(wait, pt{x, l.WaitingConcurrency})
		}
		sd := lineSeries(seriesName(labels, i, "in decode"), points(dec), runColor(i), "solid", true)
		sw := lineSeries(seriesName(labels, i, queuePrefill), points(wait), runColor(i), "dashed", true)
		sw.Symbol = "triangle"
		if v := r.Ceilings.Batch; v != nil && !ax.rate {
			// The ceiling is an offered concurrency (a vertical line); the plateau is
			// the decode concurrency measured there (a horizontal one), lower by the
			// share of each request's slot time that is prefill.
			color := capColor(len(runs), i, "#1B7837")
			lines := verticalMarks([]mark{{x: *v, text: "batch ceiling " + fmtConc(*v), color: color}}, ax)
			if p, ok := decodePlateau(r, *v); ok {
				pl := hline(p, "measured decode plateau "+fmtNum(p), color, "dotted")
				pl.Label.Position = "insideStartTop"
				lines = append(lines, pl)
			}
			withMarkLines(&sd, lines)
		}
		c.MultiSeries = append(c.MultiSeries, sd, sw)
	}
	if !ax.rate && ax.max > 0 && !math.IsInf(ax.max, 0) {
		ref := lineSeries("offered (y = x)", points([]pt{{ax.min, ax.min}, {ax.max, ax.max}}), "#9E9E9E", "dotted", false)
		if ax.log {
			// a straight y = x needs the intermediate points on a log x axis
			var ps []pt
			for x := ax.min; x <= ax.max*1.0001; x *= 2 {
				ps = append(ps, pt{x, x})
			}
			ref.Data = points(ps)
		}
		c.MultiSeries = append(c.MultiSeries, ref)
	}
	caption := "Little's law over the steady-state window: requests generating tokens, and requests between send and first token (" + queuePrefill + "). Decode concurrency that stops following the offered line is the server's real batch limit: the dotted line is the plateau measured, the dashed one the batch ceiling as an offered concurrency."
	return b.add(c, "", "", "requests", "Effective vs offered concurrency", caption, false, 360)
}

// queuePrefill names the time from send to first token, and the concurrency of
// requests in it, everywhere on the page: it is queueing plus prefill, not queueing
// alone (at concurrency 1 nothing queues and it is the prefill share).
const queuePrefill = "queue + prefill"

// decodePlateau is the highest decode concurrency measured at or beyond the batch
// ceiling: the batch the server actually runs.
func decodePlateau(r *analyze.Run, ceiling float64) (float64, bool) {
	best, ok := 0.0, false
	for _, l := range r.Levels {
		if l.Concurrency > 0 && float64(l.Concurrency) >= ceiling-1e-9 && finite(l.DecodeConcurrency) {
			best, ok = math.Max(best, l.DecodeConcurrency), true
		}
	}
	return best, ok
}
