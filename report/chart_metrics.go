package report

// The server's own metrics, per level and raw.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

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

func metricCharts(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) (perLevel, raw []chartView, notes []string) {
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
		return nil, nil, []string{"No server metrics were recorded (no sidecar file, or the server exposes no /metrics)."}
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
	var zero []string
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
	seriesLabel := func(rf ref, perRun map[int]int) string {
		sname := labels[rf.run]
		switch {
		case len(runs) == 1 && rf.m.Labels != "" && perRun[rf.run] > 1:
			sname = rf.m.Labels
		case len(runs) == 1:
			sname = ""
		case rf.m.Labels != "" && perRun[rf.run] > 1:
			sname += " · " + rf.m.Labels
		}
		return sname
	}
	dashes := []string{"solid", "dashed", "dotted"}
	for _, name := range names {
		unit := metricUnit(name)
		perRun := map[int]int{}
		for _, rf := range byName[name] {
			perRun[rf.run]++
		}

		// Per level: mean and max inside each steady-state window.
		lc := charts.NewLine()
		lc.SetGlobalOptions(append(baseOpts("metric-levels"),
			charts.WithXAxisOpts(ax.xAxis()),
			charts.WithYAxisOpts(yAxis(unit)))...)
		lc.Accept(patchLogBase2(ax))
		shade := map[int]int{}
		for _, rf := range byName[name] {
			if len(rf.m.Levels) == 0 {
				continue
			}
			r := &runs[rf.run]
			var mean, top []pt
			for _, ml := range rf.m.Levels {
				for j := range r.Levels {
					if l := &r.Levels[j]; l.Level == ml.Level {
						mean = append(mean, pt{levelXValue(l, ax.rate), ml.Mean})
						top = append(top, pt{levelXValue(l, ax.rate), ml.Max})
					}
				}
			}
			color := runColor(rf.run)
			if len(runs) == 1 {
				color = palette[shade[rf.run]%len(palette)]
			}
			shade[rf.run]++
			base := seriesLabel(rf, perRun)
			join := func(what string) string {
				if base == "" {
					return what
				}
				return base + " · " + what
			}
			sm := lineSeries(join("mean per level"), points(mean), color, "solid", true)
			sx := lineSeries(join("max per level"), points(top), color, "dashed", true)
			sx.Symbol = "triangle"
			lc.MultiSeries = append(lc.MultiSeries, sm, sx)
		}
		if len(lc.MultiSeries) > 0 {
			perLevel = append(perLevel, b.add(lc, "", "", "", name+" per level", "", false, 300))
		}

		// The raw series, scrape by scrape.
		c := charts.NewLine()
		c.SetGlobalOptions(append(baseOpts("metric"),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Time since the run started (s)"}),
			charts.WithYAxisOpts(yAxis(unit)))...)
		shade = map[int]int{}
		for _, rf := range byName[name] {
			sname := seriesLabel(rf, perRun)
			if sname == "" {
				sname = "each scrape"
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
			s := lineSeries(sname, points(ps), color, dashes[(shade[rf.run]/len(palette))%3], false)
			shade[rf.run]++
			c.MultiSeries = append(c.MultiSeries, s)
		}
		raw = append(raw, b.add(c, "", "s", "", name+" over time", "", false, 300))
	}
	return perLevel, raw, notes
}

// metricUnit names a metric's y axis, with its unit, from its Prometheus naming
// conventions. A counter is shown as rate(name): a token counter becomes tokens/s,
// and a counter of seconds (llama.cpp's tokens_predicted_seconds_total, the time its
// slots spent decoding) becomes seconds per second, the average number of requests
// busy in that phase.
func metricUnit(name string) string {
	if inner, ok := strings.CutPrefix(name, "rate("); ok {
		inner = strings.TrimSuffix(inner, ")")
		switch {
		case strings.Contains(inner, "seconds"):
			return "Busy time per second (s/s)"
		case strings.Contains(inner, "tokens"):
			return "Rate (tokens/s)"
		case strings.Contains(inner, "requests"):
			return "Rate (requests/s)"
		}
		return "Rate (per s)"
	}
	switch {
	case strings.HasSuffix(name, "_perc") || strings.Contains(name, "usage"):
		return "Fraction used (0–1)"
	case strings.HasSuffix(name, "_seconds"):
		return "Time (s)"
	case strings.HasSuffix(name, "_total"):
		return "Count (cumulative)"
	case strings.Contains(name, "tokens"):
		return "Tokens (count)"
	case strings.Contains(name, "requests") || strings.Contains(name, "running") || strings.Contains(name, "waiting") || strings.Contains(name, "reqs"):
		return "Requests (count)"
	}
	return "Value (as scraped)"
}
