package report

// Two runs in one report are a comparison: the first the baseline, the second the
// candidate (package compare). The first screen says the verdict ("candidate vs
// baseline: ceiling 24 → 32, +33%, significant") and the throughput and latency
// charts mark each level where the candidate differs significantly.

import (
	"fmt"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/compare"
)

// comparisonView is the verdict of two runs compared, for the first screen.
type comparisonView struct {
	// Line is "candidate vs baseline: ceiling 24 → 32, +33%, significant".
	Line string
	// Sides names them: "baseline: A · candidate: B".
	Sides string
	// Verdict is compare's one-line answer, or why the runs cannot be compared.
	Verdict    string
	Regression bool
	// Findings are the gated regressions and improvements, one line each.
	Findings []string
}

// comparisonOf compares the runs when there are exactly two (nil otherwise): the
// result for the chart marks (nil when they cannot be compared) and the view.
func comparisonOf(runs []analyze.Run, labels []string) (*compare.Result, *comparisonView) {
	if len(runs) != 2 {
		return nil, nil
	}
	v := &comparisonView{Sides: "baseline: " + labels[0] + " · candidate: " + labels[1]}
	res, err := compare.Compare(runs[:1], runs[1:], compare.Options{})
	if err != nil {
		v.Line = "candidate vs baseline: not compared"
		v.Verdict = err.Error()
		return nil, v
	}
	v.Line = "candidate vs baseline: " + res.CeilingText()
	if res.Ceiling == nil {
		v.Line = "candidate vs baseline: no ceiling found on either side"
	}
	v.Verdict = res.Verdict
	v.Regression = res.Regression
	for _, f := range res.Regressions {
		v.Findings = append(v.Findings, "regression: "+f.Text)
	}
	for _, f := range res.Improvements {
		v.Findings = append(v.Findings, "better: "+f.Text)
	}
	return res, v
}

// differenceMarks is a scatter series of the candidate's levels where metric
// differs significantly from the baseline (better in green, worse in red), each
// labelled with the change; none when there is no comparison or no difference.
func differenceMarks(res *compare.Result, labels []string, metric string, scale float64) []charts.SingleSeries {
	if res == nil {
		return nil
	}
	var data []interface{}
	for _, l := range res.Levels {
		for _, d := range l.Metrics {
			if d.Metric != metric || (d.Verdict != compare.Better && d.Verdict != compare.Worse) || d.Candidate == nil {
				continue
			}
			x := float64(l.Concurrency)
			if l.Rate > 0 {
				x = l.Rate
			}
			color := "#1B7837"
			if d.Verdict == compare.Worse {
				color = "#B00020"
			}
			change := ""
			if d.Change != nil {
				change = " " + strings.Replace(fmt.Sprintf("%+.0f%%", 100**d.Change), "-", "−", 1)
			}
			data = append(data, markItem{
				Name:       d.Verdict + change,
				Value:      []float64{roundSig(x, 5), roundSig(*d.Candidate*scale, 4)},
				Symbol:     "diamond",
				SymbolSize: 16,
				ItemStyle:  &opts.ItemStyle{Color: "rgba(0,0,0,0)", BorderColor: color, BorderWidth: 2},
			})
		}
	}
	if len(data) == 0 {
		return nil
	}
	s := charts.SingleSeries{Name: seriesName(labels, 1, "significant difference"), Type: "scatter", Data: data,
		Animation: opts.Bool(false)}
	s.Label = &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Position: "top", Color: "#333b48", FontSize: fontSize}
	return []charts.SingleSeries{s}
}

// markItem is one echarts scatter item with its own symbol and colours
// (go-echarts' ScatterData has no item style).
type markItem struct {
	Name       string          `json:"name"`
	Value      []float64       `json:"value"`
	Symbol     string          `json:"symbol"`
	SymbolSize int             `json:"symbolSize"`
	ItemStyle  *opts.ItemStyle `json:"itemStyle"`
}

// latencyDifferenceMarks are differenceMarks for the p50 and p99 of the latency
// chart titled title.
func latencyDifferenceMarks(res *compare.Result, labels []string, title string, scale float64) []charts.SingleSeries {
	prefix := map[string]string{"Time to first token": "ttft", "Time per output token": "tpot", "End-to-end latency": "e2e"}[title]
	if prefix == "" {
		return nil
	}
	return append(differenceMarks(res, labels, prefix+"_p50_s", scale), differenceMarks(res, labels, prefix+"_p99_s", scale)...)
}
