package report

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

// chartSpec is one chart as the page script receives it: the echarts option that
// go-echarts built, plus what the script needs for tooltips (units, a formatter kind).
// Options are plain JSON (no go-echarts FuncStr), so no data string can become code.
type chartSpec struct {
	ID     string          `json:"id"`
	Option json.RawMessage `json:"option"`
	Tip    string          `json:"tip,omitempty"` // "" = axis values with YUnit; "peruser"; "timeline"
	XUnit  string          `json:"xUnit,omitempty"`
	YUnit  string          `json:"yUnit,omitempty"`
}

// echart is what every go-echarts rectangular chart offers.
type echart interface {
	Validate()
	JSON() map[string]interface{}
}

// optionPatch lets a chart set echarts options that go-echarts has no field for
// (logBase, per-item markLine styles are fine, but axis logBase is not), through
// go-echarts' own visitor hook.
type optionPatch struct {
	charts.BaseConfigurationVisitor
	fn func(map[string]interface{})
}

func (p optionPatch) Visit(m map[string]interface{}) {
	if p.fn != nil {
		p.fn(m)
	}
}

// chartBuilder collects specs and hands out ids.
type chartBuilder struct {
	specs []chartSpec
	err   error
}

func (b *chartBuilder) add(c echart, tip, xUnit, yUnit, title, caption string, wide bool, height int) chartView {
	id := fmt.Sprintf("chart-%d", len(b.specs)+1)
	c.Validate()
	raw, err := json.Marshal(c.JSON())
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("chart %q: %w", title, err)
	}
	b.specs = append(b.specs, chartSpec{ID: id, Option: raw, Tip: tip, XUnit: xUnit, YUnit: yUnit})
	if height == 0 {
		height = 360
	}
	return chartView{ID: id, Title: title, Caption: caption, Wide: wide, Height: height}
}

// axis describes the concurrency axis shared by the sweep charts.
type axis struct {
	name string
	log  bool // geometric sweep: log scale, base 2
	min  float64
	max  float64
	rate bool // open loop: offered rate instead of concurrency
}

func sweepAxis(runs []analyze.Run) axis {
	a := axis{name: "Concurrency (requests in flight)", min: math.Inf(1), max: math.Inf(-1)}
	open := true
	for _, r := range runs {
		for _, l := range r.Levels {
			if l.Concurrency > 0 {
				open = false
			}
		}
	}
	a.rate = open
	if open {
		a.name = "Offered load (requests/s)"
	}
	for _, r := range runs {
		for i := range r.Levels {
			x := levelXValue(&r.Levels[i], open)
			if x > 0 {
				a.min = math.Min(a.min, x)
				a.max = math.Max(a.max, x)
			}
		}
	}
	if a.min > 0 && !math.IsInf(a.min, 0) && a.max/a.min >= 16 {
		a.log = true
		a.name += ", log scale"
	}
	return a
}

func levelXValue(l *analyze.Level, open bool) float64 {
	if open {
		return l.Rate
	}
	return float64(l.Concurrency)
}

func (a axis) xAxis() opts.XAxis {
	x := opts.XAxis{Type: "value", Name: a.name, NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}
	if a.log {
		x.Type = "log"
	}
	return x
}

// patchLogBase2 makes a log x axis use base 2, which matches sweeps that double.
func patchLogBase2(a axis) optionPatch {
	return optionPatch{fn: func(m map[string]interface{}) {
		if !a.log {
			return
		}
		if xs, ok := m["xAxis"].([]opts.XAxis); ok && len(xs) > 0 {
			m["xAxis"] = []map[string]interface{}{{
				"type": "log", "logBase": 2, "name": xs[0].Name, "nameLocation": "middle", "nameGap": 30,
				"min": math.Pow(2, math.Floor(math.Log2(a.min))), "max": math.Pow(2, math.Ceil(math.Log2(a.max))),
			}}
		}
	}}
}

// baseOpts are the options every chart shares; grid overrides the default plot area
// (go-echarts appends grids, so a chart must not add a second one).
func baseOpts(title string, grid ...opts.Grid) []charts.GlobalOpts {
	g := opts.Grid{Left: "72", Right: "40", Top: "44", Bottom: "56"}
	if len(grid) > 0 {
		g = grid[0]
	}
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithInitializationOpts(opts.Initialization{Renderer: "canvas", PageTitle: title}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "0", Left: "center"}),
		charts.WithGridOpts(g),
		charts.WithColorsOpts(opts.Colors(palette)),
	}
}

func yAxis(name string) opts.YAxis {
	return opts.YAxis{Type: "value", Name: name, NameLocation: "middle", NameGap: 52}
}

// pt is one [x, y] point; non-finite values are dropped by the callers.
type pt = [2]float64

func points(ps []pt) []interface{} {
	out := make([]interface{}, 0, len(ps))
	for _, p := range ps {
		if finite(p[0]) && finite(p[1]) {
			out = append(out, []float64{roundSig(p[0], 5), roundSig(p[1], 4)})
		}
	}
	return out
}

// seriesName names a series: the run's label and what the series shows when several
// runs overlay, just what it shows (capitalised) for one run.
func seriesName(labels []string, i int, what string) string {
	if len(labels) > 1 {
		if what == "" {
			return labels[i]
		}
		return labels[i] + " · " + what
	}
	if what == "" {
		return "measured"
	}
	return what
}

// lineSeries is a go-echarts line series with the report's styling.
func lineSeries(name string, data []interface{}, color, dashType string, symbols bool) charts.SingleSeries {
	s := charts.SingleSeries{Name: name, Type: "line", Data: data, Animation: opts.Bool(false)}
	s.LineStyle = &opts.LineStyle{Color: color, Width: 2, Type: dashType}
	s.ItemStyle = &opts.ItemStyle{Color: color}
	if symbols {
		s.Symbol = "circle"
		s.SymbolSize = 7
		s.ShowSymbol = opts.Bool(true)
	} else {
		s.ShowSymbol = opts.Bool(false)
		s.Symbol = "none"
	}
	return s
}

// markLine is one echarts markLine data item with its own label and style;
// go-echarts' MarkLines.Data takes any item shape.
type markLine struct {
	Name      string          `json:"name,omitempty"`
	XAxis     *float64        `json:"xAxis,omitempty"`
	YAxis     *float64        `json:"yAxis,omitempty"`
	Label     *opts.Label     `json:"label,omitempty"`
	LineStyle *opts.LineStyle `json:"lineStyle,omitempty"`
}

func vline(x float64, text, color, typ string, width float32) markLine {
	return markLine{Name: text, XAxis: &x,
		Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Color: color, Position: "insideEndTop"},
		LineStyle: &opts.LineStyle{Color: color, Type: typ, Width: width}}
}

func hline(y float64, text, color, typ string) markLine {
	return markLine{Name: text, YAxis: &y,
		Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Color: color, Position: "insideEndTop"},
		LineStyle: &opts.LineStyle{Color: color, Type: typ, Width: 1.5}}
}

func withMarkLines(s *charts.SingleSeries, lines []markLine) {
	if len(lines) == 0 {
		return
	}
	data := make([]interface{}, len(lines))
	for i, l := range lines {
		data[i] = l
	}
	s.MarkLines = &opts.MarkLines{Data: data, MarkLineStyle: opts.MarkLineStyle{Symbol: []string{"none", "none"}}}
}

// buildCharts makes every chart of the page and groups them into sections.
func buildCharts(a *analyze.Analysis, labels []string, opt Options) ([]chartSpec, []section) {
	b := &chartBuilder{}
	levels := 0
	for _, r := range a.Runs {
		levels += len(r.Levels)
	}
	if levels == 0 {
		return nil, nil
	}
	ax := sweepAxis(a.Runs)
	runs := a.Runs

	var secs []section
	secs = append(secs, decisionSection(b, runs, labels)...) // after the verdict, before the charts
	secs = append(secs, section{ID: "throughput", Title: "Throughput and ceilings",
		Intro: "Where adding concurrency stops paying: measured output throughput with the Universal Scalability Law fit, every ceiling found, and what one user sees in exchange.",
		Charts: []chartView{
			throughputChart(b, runs, labels, ax),
			perUserChart(b, runs, labels),
			effectiveChart(b, runs, labels, ax),
		}})
	lat := section{ID: "latency", Title: "Latency",
		Intro: "p50 (solid) and p99 (dashed) over every successful request of each level; horizontal lines are the latency targets (SLOs) the analysis used."}
	for _, lc := range []struct {
		title, short, yName, unit string
		scale                     float64
		get                       func(*analyze.Level) analyze.Summary
		slo                       func(analyze.SLO) *float64
	}{
		{"Time to first token", "TTFT", "TTFT (s)", "s", 1, func(l *analyze.Level) analyze.Summary { return l.TTFT }, func(s analyze.SLO) *float64 { return s.TTFT }},
		{"Time per output token", "TPOT", "TPOT (ms)", "ms", 1000, func(l *analyze.Level) analyze.Summary { return l.TPOT }, func(s analyze.SLO) *float64 { return s.TPOT }},
		{"End-to-end latency", "E2E", "E2E (s)", "s", 1, func(l *analyze.Level) analyze.Summary { return l.E2E }, func(s analyze.SLO) *float64 { return s.E2E }},
	} {
		if !hasSummary(runs, lc.get) {
			lat.Notes = append(lat.Notes, "No "+lc.short+" statistics in the analysis (no successful request measured it).")
			continue
		}
		lat.Charts = append(lat.Charts, latencyChart(b, runs, labels, ax, lc.title, lc.yName, lc.unit, lc.scale, lc.get, lc.slo))
	}
	if cv, ok := itlChart(b, runs, labels); ok {
		lat.Charts = append(lat.Charts, cv)
	} else {
		lat.Notes = append(lat.Notes, "No inter-token latency histogram in the analysis.")
	}
	secs = append(secs, lat)

	mem := section{ID: "memory", Title: "Memory and KV cache",
		Intro: "How the GPU memory is spent, and how much KV cache the workload asks for at each concurrency compared with what the deployment holds."}
	if cv, ok := memoryChart(b, runs, labels); ok {
		mem.Charts = append(mem.Charts, cv)
	} else {
		mem.Notes = append(mem.Notes, "Memory budget per GPU unknown: the capacity model needs the model's config.json and the GPU (--model-config, --gpu, --gpus, --tp).")
	}
	mem.Charts = append(mem.Charts, kvChart(b, runs, labels, ax))
	if !hasCapacity(runs) {
		mem.Notes = append(mem.Notes, "KV cache capacity unknown: the chart shows the workload's demand only.")
	}
	secs = append(secs, mem)

	tl := section{ID: "timeline", Title: "Inside one level",
		Intro: "Each bar is one request, in the order sent: waiting and prefill until the first token, then decode. The shaded band is the steady-state window the throughput figures use."}
	maxReq := opt.MaxTimelineRequests
	if maxReq <= 0 {
		maxReq = 300
	}
	for i := range runs {
		if cv, ok := timelineChart(b, &runs[i], labels[i], maxReq); ok {
			tl.Charts = append(tl.Charts, cv)
		}
	}
	if len(tl.Charts) == 0 {
		tl.Notes = append(tl.Notes, "No per-request timeline in the analysis.")
	}
	secs = append(secs, tl)

	met := section{ID: "metrics", Title: "Server metrics",
		Intro: "Scraped from the server's /metrics endpoint during the run (the sidecar file), seconds from the start of the run."}
	met.Charts, met.Notes = metricCharts(b, runs, labels)
	secs = append(secs, met)

	if b.err != nil {
		// An option that cannot be encoded is a bug in this package, not in the data
		// (non-finite values are filtered); report it on the page rather than fail.
		secs = append(secs, section{ID: "errors", Title: "Chart errors", Notes: []string{b.err.Error()}})
	}
	return b.specs, secs
}

func throughputChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
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
			ps = append(ps, pt{levelXValue(l, ax.rate), l.OutputTokS})
		}
		s := lineSeries(seriesName(labels, i, ""), points(ps), color, "solid", true)
		if !ax.rate {
			withMarkLines(&s, ceilingLines(r, color, len(runs) > 1))
		}
		c.MultiSeries = append(c.MultiSeries, s)
		if f := r.Fit.USL; f != nil && !ax.rate && len(ps) > 0 {
			c.MultiSeries = append(c.MultiSeries, lineSeries(seriesName(labels, i, "USL fit"), points(uslCurve(f, ax)), color, "dashed", false))
		}
	}
	caption := "Points are measured levels; the dashed curve is the USL fit X(N) = λN / (1 + σ(N−1) + κN(N−1)). Vertical lines mark the ceilings; the solid one is the realistic ceiling."
	return b.add(c, "", "", "tok/s", "Output throughput vs concurrency", caption, true, 420)
}

// ceilingLines marks every ceiling of a run; the realistic one is drawn solid.
func ceilingLines(r *analyze.Run, color string, multi bool) []markLine {
	var out []markLine
	bind := r.Ceiling.Binding
	lineColor := func(kind string) string {
		if multi {
			return color
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
	if c := r.Ceiling.Concurrency; c != nil {
		text := "ceiling " + fmtConc(*c)
		if bind != "" {
			text += " (" + bindingName(bind) + ")"
		}
		out = append(out, vline(*c, text, lineColor("ceiling"), "solid", 2.5))
	}
	add := func(kind string, v *float64, name string) {
		if v == nil || !finite(*v) {
			return
		}
		if kind == bind && r.Ceiling.Concurrency != nil && math.Abs(*r.Ceiling.Concurrency-*v) < 1e-9 {
			return // already drawn as the realistic ceiling
		}
		out = append(out, vline(*v, name+" "+fmtConc(*v), lineColor(kind), "dashed", 1.5))
	}
	add("kv", r.Ceilings.KV, "KV")
	add("batch", r.Ceilings.Batch, "batch")
	add("knee", r.Ceilings.Knee, "knee")
	add("slo", r.Ceilings.SLO, "SLO")
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
	return b.add(c, "", "", unit, title+" vs concurrency", "", false, 340)
}

func perUserChart(b *chartBuilder, runs []analyze.Run, labels []string) chartView {
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("per-user"),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Total output throughput (tok/s)", NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Per-user output speed (tok/s)")))...)
	for i := range runs {
		r := &runs[i]
		var data []interface{}
		for j := range r.Levels {
			l := &r.Levels[j]
			if !finite(l.OutputTokS) || !finite(l.PerUserTokS) {
				continue
			}
			data = append(data, []interface{}{roundSig(l.OutputTokS, 5), roundSig(l.PerUserTokS, 4), levelX(l)})
		}
		s := lineSeries(seriesName(labels, i, ""), data, runColor(i), "solid", true)
		s.Label = &opts.Label{Show: opts.Bool(true), Formatter: "{@[2]}", Position: "top", Color: "#444", FontSize: 10}
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "Each point is a level, labelled with its concurrency: moving right buys total throughput, moving down costs each user speed."
	return b.add(c, "peruser", "tok/s", "tok/s", "Interactivity vs throughput", caption, false, 360)
}

func effectiveChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
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
		sw := lineSeries(seriesName(labels, i, "waiting / prefill"), points(wait), runColor(i), "dashed", true)
		sw.Symbol = "triangle"
		if v := r.Ceilings.Batch; v != nil {
			withMarkLines(&sd, []markLine{hline(*v, "batch plateau "+fmtConc(*v), "#1B7837", "dashed")})
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
	caption := "Little's law over the steady-state window: requests generating tokens and requests still waiting for their first token. Decode concurrency that stops following the offered line is the server's real batch limit."
	return b.add(c, "", "", "requests", "Effective vs offered concurrency", caption, false, 360)
}

// pickLevels chooses up to three levels to compare ITL distributions: the first, the
// one at the ceiling and the last.
func pickLevels(r *analyze.Run) []*analyze.Level {
	var out []*analyze.Level
	add := func(l *analyze.Level) {
		if l == nil || l.ITLHistogram == nil || len(l.ITLHistogram.Counts) == 0 {
			return
		}
		for _, o := range out {
			if o == l {
				return
			}
		}
		out = append(out, l)
	}
	if len(r.Levels) == 0 {
		return nil
	}
	atC, _ := keyLevels(r)
	add(&r.Levels[0])
	add(atC)
	add(&r.Levels[len(r.Levels)-1])
	sort.Slice(out, func(i, j int) bool { return out[i].Level < out[j].Level })
	return out
}

func itlChart(b *chartBuilder, runs []analyze.Run, labels []string) (chartView, bool) {
	logX := true
	type histSeries struct {
		name  string
		color string
		dash  string
		h     *analyze.Histogram
	}
	var hs []histSeries
	dashes := []string{"dotted", "solid", "dashed"}
	for i := range runs {
		r := &runs[i]
		var ls []*analyze.Level
		if len(runs) == 1 {
			ls = pickLevels(r)
		} else if atC, _ := keyLevels(r); atC != nil && atC.ITLHistogram != nil && len(atC.ITLHistogram.Counts) > 0 {
			ls = []*analyze.Level{atC}
		}
		for k, l := range ls {
			h := l.ITLHistogram
			if len(h.Edges) != len(h.Counts)+1 {
				continue
			}
			if h.Edges[0] <= 0 {
				logX = false
			}
			color := runColor(i)
			if len(runs) == 1 {
				color = palette[k%len(palette)]
			}
			hs = append(hs, histSeries{name: seriesName(labels, i, "concurrency "+levelX(l)), color: color, dash: dashes[k%len(dashes)], h: h})
		}
	}
	if len(hs) == 0 {
		return chartView{}, false
	}
	xName := "Inter-token latency (ms)"
	x := opts.XAxis{Type: "value", Name: xName, NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}
	if logX {
		x.Type = "log"
		x.Name = xName + ", log scale"
	}
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("itl"),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(yAxis("Share of token gaps (%)")))...)
	for _, s := range hs {
		var total int64
		for _, n := range s.h.Counts {
			total += n
		}
		if total == 0 {
			continue
		}
		var ps []pt
		for k, n := range s.h.Counts {
			ps = append(ps, pt{s.h.Edges[k] * 1000, 100 * float64(n) / float64(total)})
		}
		last := len(s.h.Counts) - 1
		ps = append(ps, pt{s.h.Edges[last+1] * 1000, 100 * float64(s.h.Counts[last]) / float64(total)})
		ls := lineSeries(s.name, points(ps), s.color, "solid", false)
		ls.Step = "end"
		ls.AreaStyle = &opts.AreaStyle{Color: s.color, Opacity: opts.Float(0.12)}
		c.MultiSeries = append(c.MultiSeries, ls)
	}
	caption := "Distribution of the gaps between consecutive token chunks, pooled over the requests of a level. A long right tail means stalls: preemption, prefill of newcomers, or scheduling."
	if len(runs) > 1 {
		caption += " One level per run: the one at its realistic ceiling."
	}
	return b.add(c, "", "ms", "%", "Inter-token latency distribution", caption, false, 340), true
}

func memoryChart(b *chartBuilder, runs []analyze.Run, labels []string) (chartView, bool) {
	type comp struct {
		name, color string
		get         func(*analyze.Budget) int64
	}
	comps := []comp{
		{"Weights", "#4E79A7", func(b *analyze.Budget) int64 { return b.WeightsBytes }},
		{"KV cache budget", "#59A14F", func(b *analyze.Budget) int64 { return b.KVBudgetBytes }},
		{"Activation reserve", "#F28E2B", func(b *analyze.Budget) int64 { return b.ReserveBytes }},
		{"Held back (1 − utilization)", "#BAB0AC", func(b *analyze.Budget) int64 { return b.UnusableBytes }},
		{"Unallocated", "#E8E8E8", func(b *analyze.Budget) int64 {
			free := b.MemoryBytes - b.WeightsBytes - b.KVBudgetBytes - b.ReserveBytes - b.UnusableBytes
			if free < 0 {
				return 0
			}
			return free
		}},
	}
	var cats []string
	var budgets []*analyze.Budget
	for i := range runs {
		if c := runs[i].Capacity; c != nil && c.Budget != nil {
			bd := c.Budget
			cat := fmt.Sprintf("%s × %d, TP %d", bd.GPU, bd.GPUs, bd.TP)
			if len(runs) > 1 {
				cat = labels[i] + "\n" + cat
			}
			cats = append(cats, cat)
			budgets = append(budgets, bd)
		}
	}
	if len(budgets) == 0 {
		return chartView{}, false
	}
	c := charts.NewBar()
	c.SetGlobalOptions(append(baseOpts("memory", opts.Grid{Left: "16", Right: "40", Top: "60", Bottom: "56", ContainLabel: opts.Bool(true)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "center"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Memory per GPU (GiB)", NameLocation: "middle", NameGap: 30}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: cats, Inverse: opts.Bool(true)}),
	)...)
	c.Accept(optionPatch{fn: func(m map[string]interface{}) {
		if t, ok := m["tooltip"].(opts.Tooltip); ok {
			_ = t
			m["tooltip"] = map[string]interface{}{"show": true, "trigger": "axis", "axisPointer": map[string]string{"type": "shadow"}}
		}
	}})
	for _, cp := range comps {
		data := make([]interface{}, len(budgets))
		var any bool
		for k, bd := range budgets {
			v := round(float64(cp.get(bd))/(1<<30), 1)
			data[k] = v
			any = any || v > 0
		}
		if !any {
			continue // e.g. nothing unallocated: no empty legend entry
		}
		s := charts.SingleSeries{Name: cp.name, Type: "bar", Stack: "memory", Data: data, BarMaxWidth: "56"}
		s.ItemStyle = &opts.ItemStyle{Color: cp.color}
		// The value inside each segment, when there is room for it.
		s.Label = &opts.Label{Show: opts.Bool(true), Position: "inside", Formatter: "{c} GiB", Color: "#1d2330", FontSize: 11}
		s.LabelLayout = &opts.LabelLayout{HideOverlap: opts.Bool(true)}
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "One GPU: the server may use memory × utilization; weights and the activation reserve come off the top and the rest is KV cache."
	return b.add(c, "", "GiB", "GiB", "Memory per GPU", caption, false, max(300, 140+70*len(budgets))), true
}

func hasCapacity(runs []analyze.Run) bool {
	for _, r := range runs {
		if r.Capacity != nil && r.Capacity.KVCapacityTokens != nil {
			return true
		}
	}
	return false
}

func kvChart(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) chartView {
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("kv"),
		charts.WithXAxisOpts(ax.xAxis()),
		charts.WithYAxisOpts(yAxis("KV cache (tokens)")))...)
	c.Accept(patchLogBase2(ax))
	for i := range runs {
		r := &runs[i]
		var mean, p99 []pt
		for j := range r.Levels {
			l := &r.Levels[j]
			x := float64(l.Concurrency)
			if ax.rate {
				// open loop: demand follows the requests actually in flight
				x = l.DecodeConcurrency + l.WaitingConcurrency
			}
			mean = append(mean, pt{levelXValue(l, ax.rate), x * (l.MeanPromptTokens + l.MeanOutputTokens)})
			if r.Capacity != nil && r.Capacity.P99RequestTokens != nil {
				p99 = append(p99, pt{levelXValue(l, ax.rate), x * *r.Capacity.P99RequestTokens})
			}
		}
		sm := lineSeries(seriesName(labels, i, "demand, mean request"), points(mean), runColor(i), "solid", true)
		var lines []markLine
		if cp := r.Capacity; cp != nil {
			if cp.KVCapacityTokens != nil {
				lines = append(lines, hline(float64(*cp.KVCapacityTokens), "capacity "+fmtInt(*cp.KVCapacityTokens)+" ("+cp.Source+")", capColor(len(runs), i, "#B00020"), "solid"))
			}
			if cp.Source == "measured" && cp.ModelledKVCapacityTokens != nil {
				ml := hline(float64(*cp.ModelledKVCapacityTokens), "modelled "+fmtInt(*cp.ModelledKVCapacityTokens), capColor(len(runs), i, "#7B3294"), "dashed")
				ml.Label.Position = "insideStartBottom" // keep clear of the measured line's label
				lines = append(lines, ml)
			}
		}
		if v := r.Ceilings.KV; v != nil && !ax.rate {
			lines = append(lines, vline(*v, "KV ceiling "+fmtConc(*v), capColor(len(runs), i, "#7B3294"), "dashed", 1.5))
		}
		withMarkLines(&sm, lines)
		c.MultiSeries = append(c.MultiSeries, sm)
		if len(p99) > 0 {
			s := lineSeries(seriesName(labels, i, "demand, p99 request"), points(p99), runColor(i), "dashed", false)
			c.MultiSeries = append(c.MultiSeries, s)
		}
	}
	caption := "Demand = requests in flight × tokens per request (prompt + output, the most a request holds at its end). Where demand crosses capacity the server must queue or preempt."
	return b.add(c, "", "", "tokens", "KV cache demand vs capacity", caption, false, 360)
}

func capColor(n, i int, single string) string {
	if n > 1 {
		return runColor(i)
	}
	return single
}

// thin keeps at most max items, evenly spaced, always including the first and last.
func thin[T any](xs []T, max int) []T {
	if len(xs) <= max || max < 2 {
		return xs
	}
	out := make([]T, 0, max)
	for k := 0; k < max; k++ {
		out = append(out, xs[k*(len(xs)-1)/(max-1)])
	}
	return out
}

func timelineChart(b *chartBuilder, r *analyze.Run, label string, maxReq int) (chartView, bool) {
	t := r.Timeline
	if t == nil || len(t.Requests) == 0 {
		return chartView{}, false
	}
	reqs := append([]analyze.TimelineRequest(nil), t.Requests...)
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].Sent < reqs[j].Sent })
	reqs = thin(reqs, maxReq)
	total := t.Total
	if total < len(t.Requests) {
		total = len(t.Requests)
	}
	thinned := t.Thinned || len(reqs) < len(t.Requests)

	var lvl *analyze.Level
	for i := range r.Levels {
		if r.Levels[i].Level == t.Level {
			lvl = &r.Levels[i]
		}
	}
	cats := make([]string, len(reqs))
	offset := make([]interface{}, len(reqs))
	wait := make([]interface{}, len(reqs))
	decode := make([]interface{}, len(reqs))
	failed := 0
	for k, q := range reqs {
		cats[k] = fmt.Sprintf("#%d (worker %d)", k+1, q.Worker)
		offset[k] = round(q.Sent, 3)
		end := q.End
		if q.FirstToken != nil {
			wait[k] = round(*q.FirstToken-q.Sent, 3)
			decode[k] = round(end-*q.FirstToken, 3)
		} else {
			wait[k] = round(end-q.Sent, 3)
			decode[k] = 0
		}
		if q.Error {
			failed++
			wait[k] = map[string]interface{}{"value": wait[k], "itemStyle": map[string]string{"color": "#B00020"}}
		}
	}
	note := fmt.Sprintf("all %d requests", len(reqs))
	if thinned {
		note = fmt.Sprintf("showing %d of %d requests (thinned evenly)", len(reqs), total)
	}
	c := charts.NewBar()
	c.SetGlobalOptions(append(baseOpts("timeline", opts.Grid{Left: "40", Right: "24", Top: "44", Bottom: "56"}),
		charts.WithTitleOpts(opts.Title{Subtitle: note, Right: "8", Top: "0"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "8", Data: []string{"waiting + prefill", "decode"}}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Time since the level started (s)", NameLocation: "middle", NameGap: 30}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: cats, Inverse: opts.Bool(true), Name: "Requests, in the order sent", NameLocation: "middle", NameGap: 12,
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(false)}}),
	)...)
	off := charts.SingleSeries{Name: "sent at", Type: "bar", Stack: "t", Data: offset, BarCategoryGap: "20%"}
	off.ItemStyle = &opts.ItemStyle{Color: "rgba(0,0,0,0)"}
	ws := charts.SingleSeries{Name: "waiting + prefill", Type: "bar", Stack: "t", Data: wait}
	ws.ItemStyle = &opts.ItemStyle{Color: "#E69F00"}
	ds := charts.SingleSeries{Name: "decode", Type: "bar", Stack: "t", Data: decode}
	ds.ItemStyle = &opts.ItemStyle{Color: "#0072B2"}
	if lvl != nil && lvl.WindowEndS > lvl.WindowStartS {
		ds.MarkAreas = &opts.MarkAreas{
			Data: []interface{}{[]interface{}{
				map[string]interface{}{"name": "steady-state window", "xAxis": round(lvl.WindowStartS, 3)},
				map[string]interface{}{"xAxis": round(lvl.WindowEndS, 3)},
			}},
			MarkAreaStyle: opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: "rgba(0,114,178,0.07)"},
				Label: &opts.Label{Show: opts.Bool(true), Position: "insideBottom", Color: "#555"}},
		}
	}
	c.MultiSeries = append(c.MultiSeries, off, ws, ds)
	title := fmt.Sprintf("Per-request timeline, level %d", t.Level)
	if lvl != nil {
		title += " (concurrency " + levelX(lvl) + ")"
	}
	if label != "" {
		title += " · " + label
	}
	caption := "Amber: waiting and prefill (until the first token); blue: decode."
	if failed > 0 {
		caption += fmt.Sprintf(" Red: %d failed requests.", failed)
	}
	if thinned {
		caption += " " + strings.ToUpper(note[:1]) + note[1:] + " to keep the report small."
	}
	h := 120 + 2*len(reqs)
	if h < 320 {
		h = 320
	}
	if h > 760 {
		h = 760
	}
	return b.add(c, "timeline", "s", "s", title, caption, true, h), true
}

// metricOrder puts the metrics a reviewer looks for first.
var metricOrder = []string{"running", "waiting", "cache_usage", "kv_cache", "usage", "processing", "deferred", "preempt", "tokens"}

func metricRank(name string) int {
	for i, k := range metricOrder {
		if strings.Contains(name, k) {
			return i
		}
	}
	return len(metricOrder)
}

const maxMetricCharts = 6

func metricCharts(b *chartBuilder, runs []analyze.Run, labels []string) ([]chartView, []string) {
	type ref struct {
		run int
		m   *analyze.MetricSeries
	}
	byName := map[string][]ref{}
	var names []string
	for i := range runs {
		for k := range runs[i].Metrics {
			m := &runs[i].Metrics[k]
			if len(m.Points) == 0 {
				continue
			}
			if _, ok := byName[m.Name]; !ok {
				names = append(names, m.Name)
			}
			byName[m.Name] = append(byName[m.Name], ref{i, m})
		}
	}
	if len(names) == 0 {
		return nil, []string{"No server metrics were recorded (no sidecar file, or the server exposes no /metrics)."}
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := metricRank(names[i]), metricRank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	allZero := func(rs []ref) bool {
		for _, r := range rs {
			for _, p := range r.m.Points {
				if p[1] != 0 {
					return false
				}
			}
		}
		return true
	}
	// A series that stayed at zero the whole run (speculative decoding on a server
	// without it, say) would take a chart's place and say nothing: name it instead.
	var notes, zero []string
	live := names[:0:0]
	for _, n := range names {
		if allZero(byName[n]) {
			zero = append(zero, n)
		} else {
			live = append(live, n)
		}
	}
	if len(zero) > 0 {
		notes = append(notes, fmt.Sprintf("Always 0 during the run, not drawn: %s.", strings.Join(zero, ", ")))
	}
	names = live
	if len(names) > maxMetricCharts {
		notes = append(notes, fmt.Sprintf("%d more metrics are in the embedded analysis but not drawn: %s.", len(names)-maxMetricCharts, strings.Join(names[maxMetricCharts:], ", ")))
		names = names[:maxMetricCharts]
	}
	var out []chartView
	for _, name := range names {
		c := charts.NewLine()
		c.SetGlobalOptions(append(baseOpts("metric"),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Time since the run started (s)", NameLocation: "middle", NameGap: 30}),
			charts.WithYAxisOpts(yAxis(metricUnit(name))))...)
		perRun := map[int]int{}
		for _, rf := range byName[name] {
			perRun[rf.run]++
		}
		shade := map[int]int{}
		for _, rf := range byName[name] {
			sname := labels[rf.run]
			switch {
			case len(runs) == 1 && rf.m.Labels != "":
				sname = rf.m.Labels
			case len(runs) == 1:
				sname = "value"
			case rf.m.Labels != "" && perRun[rf.run] > 1:
				sname += " · " + rf.m.Labels
			}
			ps := make([]pt, 0, len(rf.m.Points))
			for _, p := range rf.m.Points {
				ps = append(ps, pt{p[0], p[1]})
			}
			ps = thin(ps, 600)
			color := runColor(rf.run)
			if len(runs) == 1 {
				color = palette[shade[rf.run]%len(palette)]
			}
			dashes := []string{"solid", "dashed", "dotted"}
			s := lineSeries(sname, points(ps), color, dashes[(shade[rf.run]/len(palette))%3], false)
			shade[rf.run]++
			c.MultiSeries = append(c.MultiSeries, s)
		}
		out = append(out, b.add(c, "", "s", "", name, "", false, 300))
	}
	return out, notes
}

// metricUnit names a metric's y axis from its Prometheus naming conventions.
func metricUnit(name string) string {
	switch {
	case strings.HasSuffix(name, "_perc") || strings.Contains(name, "usage"):
		return "Fraction (0–1)"
	case strings.HasSuffix(name, "_seconds") || strings.HasSuffix(name, "_seconds_total"):
		return "Seconds"
	case strings.HasSuffix(name, "_total"):
		return "Count (cumulative)"
	case strings.Contains(name, "tokens"):
		return "Tokens"
	case strings.Contains(name, "requests") || strings.Contains(name, "running") || strings.Contains(name, "waiting"):
		return "Requests"
	}
	return "Value"
}
