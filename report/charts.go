package report

import (
	"encoding/json"
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/compare"
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
	// comparison marks the candidate's significant differences (compareverdict.go).
	comparison *compare.Result
}

func (b *chartBuilder) add(c echart, tip, xUnit, yUnit, title, caption string, wide bool, height int) chartView {
	id := fmt.Sprintf("chart-%d", len(b.specs)+1)
	c.Validate()
	raw, err := layoutJSON(c.JSON())
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("chart %q: %w", title, err)
	}
	b.specs = append(b.specs, chartSpec{ID: id, Option: raw, Tip: tip, XUnit: xUnit, YUnit: yUnit})
	if height == 0 {
		height = 360
	}
	return chartView{ID: id, Title: title, Caption: caption, Wide: wide, Height: height}
}

// buildCharts makes every chart of the page and groups them into sections.
func buildCharts(a *analyze.Analysis, labels []string, opt Options) ([]chartSpec, []section) {
	b := &chartBuilder{}
	b.comparison, _ = comparisonOf(a.Runs, labels)
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
	secs = append(secs, searchSection(b, runs, labels, ax)...)
	secs = append(secs, predictedSections(b, a, labels)...)
	secs = append(secs, summarySections(a)...)
	secs = append(secs, section{ID: "throughput", Title: "Throughput and ceilings",
		Intro: "Where adding concurrency stops paying: measured output throughput with the Universal Scalability Law fit, every ceiling found, and what one user sees in exchange.",
		Charts: []chartView{
			throughputChart(b, runs, labels, ax),
			perUserChart(b, runs, labels),
			effectiveChart(b, runs, labels, ax),
		},
		Notes: invalidNotes(runs, labels)})
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
	mem.Notes = append(mem.Notes, kvCheckNotes(runs, labels)...)
	if !hasCapacity(runs) {
		mem.Notes = append(mem.Notes, "KV cache capacity unknown: the chart shows the workload's demand only.")
	}
	secs = append(secs, mem)

	tl := section{ID: "timeline", Title: "Inside one level",
		Intro: "Each bar is one request, in the order sent: " + queuePrefill + " until the first token, then decode. The shaded band is the steady-state window the throughput figures use."}
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
		Intro: "Scraped from the server's /metrics endpoint during the run (the sidecar file). Each point is one level: the mean (solid) and the maximum (dashed) of the scrapes inside its steady-state window; counters are shown as their rate per second. The scrape-by-scrape series are below, collapsed."}
	met.Charts, met.Raw, met.Notes = metricCharts(b, runs, labels, ax)
	if len(met.Raw) > 0 && len(met.Charts) == 0 {
		// No per-level aggregates (an analysis from an older ceiling): the raw
		// series are all there is, so show them.
		met.Charts, met.Raw = met.Raw, nil
		met.Intro = "Scraped from the server's /metrics endpoint during the run (the sidecar file), seconds from the start of the run; counters are shown as their rate per second."
	}
	secs = append(secs, met)

	if b.err != nil {
		// An option that cannot be encoded is a bug in this package, not in the data
		// (non-finite values are filtered); report it on the page rather than fail.
		secs = append(secs, section{ID: "errors", Title: "Chart errors", Notes: []string{b.err.Error()}})
	}
	return b.specs, secs
}
