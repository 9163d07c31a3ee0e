package report

// Overlays on the throughput and latency curves: bootstrap confidence intervals as
// error bars (vertical segments of one line series, broken between levels) and the
// invalid levels as hollow grey markers.

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

func nan() float64 { return math.NaN() }

// invalidColor draws the levels excluded from the ceilings.
const invalidColor = "#9E9E9E"

// errorBars is a line series of one vertical segment per interval, x in xs: echarts
// breaks a line at a "-" item, so each pair of points is drawn alone.
func errorBars(name, color string, xs []float64, ivs []*analyze.Interval, scale float64) (charts.SingleSeries, bool) {
	var data []interface{}
	for i, iv := range ivs {
		if iv == nil || !finite(xs[i]) || !finite(iv.Low) || !finite(iv.High) {
			continue
		}
		data = append(data,
			[]float64{roundSig(xs[i], 5), roundSig(iv.Low*scale, 4)},
			[]float64{roundSig(xs[i], 5), roundSig(iv.High*scale, 4)},
			"-")
	}
	if len(data) == 0 {
		return charts.SingleSeries{}, false
	}
	s := lineSeries(name, data, color, "solid", false)
	s.LineStyle.Width = 1.5
	s.LineStyle.Opacity = opts.Float(0.6)
	s.ConnectNulls = opts.Bool(false)
	return s, true
}

// invalidMarkers is a scatter of hollow grey markers over the invalid levels' points.
func invalidMarkers(name string, ps []pt) (charts.SingleSeries, bool) {
	if len(ps) == 0 {
		return charts.SingleSeries{}, false
	}
	s := charts.SingleSeries{Name: name, Type: "scatter", Data: points(ps), Animation: opts.Bool(false),
		Symbol: "emptyCircle", SymbolSize: 11, ItemStyle: &opts.ItemStyle{Color: invalidColor, BorderColor: invalidColor}}
	return s, true
}

// onCurve reports whether a level belongs on a chart's line: a valid level. An
// invalid one is drawn as a hollow marker beside the line, never joined to it (a
// failed level's 0 tok/s joined to the line would draw a fall that was never
// measured).
func onCurve(l *analyze.Level) bool { return l.Valid && completed(l) }

// completed reports whether any request of the level succeeded: a level without
// one measured nothing, so it is not plotted at all (not at 0 as if measured).
func completed(l *analyze.Level) bool { return l.Requests > l.Errors }

// throughputOverlays are the output tok/s error bars and invalid markers of every run.
func throughputOverlays(runs []analyze.Run, labels []string, ax axis) []charts.SingleSeries {
	return overlays(runs, labels, ax, func(l *analyze.Level) (float64, *analyze.Interval) {
		var iv *analyze.Interval
		if l.CI != nil {
			iv = l.CI.OutputTokS
		}
		return l.OutputTokS, iv
	}, 1, "95% CI")
}

// latencyOverlays are the p50 and p99 markers of the invalid levels (kept off the
// lines) and, for TTFT, both percentiles' error bars.
func latencyOverlays(runs []analyze.Run, labels []string, ax axis, get func(*analyze.Level) analyze.Summary, scale float64, ttft bool) []charts.SingleSeries {
	var out []charts.SingleSeries
	out = append(out, overlays(runs, labels, ax, func(l *analyze.Level) (float64, *analyze.Interval) {
		var iv *analyze.Interval
		if ttft && l.CI != nil {
			iv = l.CI.TTFTP99
		}
		v := nan()
		if s := get(l); s.P99 != nil {
			v = *s.P99
		}
		return v, iv
	}, scale, "p99 95% CI")...)
	out = append(out, overlays(runs, labels, ax, func(l *analyze.Level) (float64, *analyze.Interval) {
		var iv *analyze.Interval
		if ttft && l.CI != nil {
			iv = l.CI.TTFTP50
		}
		v := nan()
		if s := get(l); s.P50 != nil {
			v = *s.P50
		}
		return v, iv
	}, scale, "p50 95% CI")...)
	return out
}

// overlays builds, per run, the error bars of what (value, interval) picks and the
// invalid markers at the values.
func overlays(runs []analyze.Run, labels []string, ax axis, what func(*analyze.Level) (float64, *analyze.Interval), scale float64, ciName string) []charts.SingleSeries {
	var out []charts.SingleSeries
	for i := range runs {
		r := &runs[i]
		var xs []float64
		var ivs []*analyze.Interval
		var bad []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			v, iv := what(l)
			if !completed(l) {
				iv = nil // nothing measured: no interval to draw (not a bar at 0–0)
			}
			x := levelXValue(l, ax.rate)
			xs, ivs = append(xs, x), append(ivs, iv)
			if !l.Valid && finite(v) && completed(l) {
				bad = append(bad, pt{x, v * scale})
			}
		}
		if s, ok := errorBars(seriesName(labels, i, ciName), runColor(i), xs, ivs, scale); ok {
			out = append(out, s)
		}
		if s, ok := invalidMarkers(seriesName(labels, i, "invalid level"), bad); ok {
			out = append(out, s)
		}
	}
	return out
}
