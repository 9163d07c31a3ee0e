package report

// Inside one level: the ITL distribution and the per-request timeline.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

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
	x := opts.XAxis{Type: "value", Name: "Inter-token latency (ms)", Scale: opts.Bool(true)}
	if logX {
		x.Type = "log"
		x.Name = "Inter-token latency (ms, log scale)"
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
	c.SetGlobalOptions(append(baseOpts("timeline"),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "center", Data: []string{queuePrefill, "decode"}}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Time since the level started (s)"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: cats, Inverse: opts.Bool(true), Name: "Requests (in the order sent)",
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(false)}}),
	)...)
	off := charts.SingleSeries{Name: "sent at", Type: "bar", Stack: "t", Data: offset, BarCategoryGap: "20%"}
	off.ItemStyle = &opts.ItemStyle{Color: "rgba(0,0,0,0)"}
	ws := charts.SingleSeries{Name: queuePrefill, Type: "bar", Stack: "t", Data: wait}
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
				Label: &opts.Label{Show: opts.Bool(true), Position: "insideBottom", Color: "#555", FontSize: smallFontSize}},
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
	caption := "Amber: " + queuePrefill + " (from send to the first token); blue: decode."
	if failed > 0 {
		caption += fmt.Sprintf(" Red: %d failed requests.", failed)
	}
	if thinned {
		caption += " " + strings.ToUpper(note[:1]) + note[1:] + " to keep the report small."
	} else {
		caption += " Showing " + note + "."
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
