package report

// The ceiling search's path on the throughput curve: each level the search ran, in
// order, coloured by its verdict, with the bracket it ended in.

import (
	"fmt"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

// searchVerdictColors colour a search level by its verdict.
var searchVerdictColors = map[string]string{
	"pass": "#009E73", "fail": "#B00020", "invalid": "#999999", "unjudged": "#E69F00", "pending": "#999999",
}

// searchSection is the search's answer, path chart and steps, for each run that
// was recorded by a search; none when no run was.
func searchSection(b *chartBuilder, runs []analyze.Run, labels []string, ax axis) []section {
	var out []section
	for i := range runs {
		r := &runs[i]
		p := r.Search
		if p == nil {
			continue
		}
		s := section{ID: fmt.Sprintf("search-%d", i), Title: "Ceiling search",
			Intro: p.Answer}
		if len(runs) > 1 {
			s.Title += " · " + labels[i]
		}
		if cv, ok := searchChart(b, r, ax); ok {
			s.Charts = append(s.Charts, cv)
		}
		if p.Sustain != "" {
			s.Notes = append(s.Notes, p.Sustain)
		}
		s.Notes = append(s.Notes, fmt.Sprintf("Criteria: %s; resolution %s; GPU time to the verdict %.0f s (the sum of the search's level durations).",
			strings.Join(p.Criteria, "; "), p.Resolution, p.LevelS))
		for k, st := range p.Steps {
			line := fmt.Sprintf("#%d level %d at %s (%s): %s, bracket %s", k+1, st.Level, trimNum(st.X), st.Phase, st.Verdict, bracket(st.Lo, st.Hi))
			if st.Verdict == "unjudged" {
				line += " — unjudged: " + analyze.UnjudgedReason(st)
			} else if len(st.Evidence) > 0 {
				line += " — " + strings.Join(st.Evidence, "; ")
			}
			s.Notes = append(s.Notes, line)
		}
		out = append(out, s)
	}
	return out
}

// searchChart draws the levels the search ran on the run's throughput curve: the
// path in order (dashed), each level coloured by its verdict, the bracket as two
// vertical lines.
func searchChart(b *chartBuilder, r *analyze.Run, ax axis) (chartView, bool) {
	p := r.Search
	byLevel := map[int]*analyze.Level{}
	for i := range r.Levels {
		byLevel[r.Levels[i].Level] = &r.Levels[i]
	}
	var path []pt
	groups := map[string][]pt{}
	for _, st := range p.Steps {
		l := byLevel[st.Level]
		if l == nil {
			continue
		}
		q := pt{st.X, l.OutputTokS}
		path = append(path, q)
		groups[st.Verdict] = append(groups[st.Verdict], q)
	}
	if len(path) == 0 {
		return chartView{}, false
	}
	c := charts.NewLine()
	c.SetGlobalOptions(append(baseOpts("search"),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: ax.name, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(yAxis("Output throughput (tok/s)")))...)
	order := lineSeries("search order", points(path), "#555555", "dashed", false)
	var marks []markLine
	if p.Lo > 0 {
		marks = append(marks, vline(p.Lo, "ceiling "+trimNum(p.Lo), "#009E73", "solid", 2))
	}
	if p.Hi > 0 {
		marks = append(marks, vline(p.Hi, "fails at "+trimNum(p.Hi)+" ("+p.Bound+")", "#B00020", "dashed", 1.5))
	}
	withMarkLines(&order, marks)
	c.MultiSeries = append(c.MultiSeries, order)
	for _, v := range []string{"pass", "fail", "invalid", "unjudged"} {
		if len(groups[v]) == 0 {
			continue
		}
		s := lineSeries(v, points(groups[v]), searchVerdictColors[v], "solid", true)
		s.LineStyle = &opts.LineStyle{Width: 0, Opacity: opts.Float(0)}
		s.SymbolSize = 10
		c.MultiSeries = append(c.MultiSeries, s)
	}
	caption := "Each point is a level the search ran, at its measured output throughput, coloured by its verdict (invalid: re-run longer, not judged; unjudged: the knee had no level below to compare with); the dashed line joins them in the order they ran. The vertical lines are the bracket the search ended in: the ceiling (the highest passing level) and the lowest failing level above it."
	return b.add(c, "", "", "tok/s", "Search path", caption, true, 360), true
}

func bracket(lo, hi float64) string {
	l, h := "?", "?"
	if lo > 0 {
		l = trimNum(lo)
	}
	if hi > 0 {
		h = trimNum(hi)
	}
	return l + ".." + h
}

func trimNum(v float64) string { return fmt.Sprintf("%g", v) }
