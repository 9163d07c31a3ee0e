package report

// Series, mark lines and label placement helpers shared by the charts.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

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
		Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Color: color, Position: "insideEndTop", FontSize: fontSize},
		LineStyle: &opts.LineStyle{Color: color, Type: typ, Width: width}}
}

func hline(y float64, text, color, typ string) markLine {
	return markLine{Name: text, YAxis: &y,
		Label:     &opts.Label{Show: opts.Bool(true), Formatter: "{b}", Color: color, Position: "insideEndTop", FontSize: fontSize},
		LineStyle: &opts.LineStyle{Color: color, Type: typ, Width: 1.5}}
}

// vlinePositions alternate the end of the line a vertical mark's label sits at.
var vlinePositions = []string{"insideEndTop", "insideStartTop"}

// mark is one vertical mark before marks at the same concurrency are merged.
type mark struct {
	x     float64
	text  string
	color string
	solid bool
}

// verticalMarks turns marks into mark lines: marks at the same concurrency become one
// line with one label ("ceiling 4 (server batch) · knee 4", not two labels drawn over
// each other), a mark past the end of the axis is drawn at the edge with its value
// and an arrow, and the labels of successive lines alternate sides.
func verticalMarks(ms []mark, ax axis) []markLine { return verticalMarksFrom(ms, ax, 0) }

// verticalMarksFrom is verticalMarks with the first label at vlinePositions[from]:
// 1 starts at the bottom end, where a chart's horizontal lines leave room.
func verticalMarksFrom(ms []mark, ax axis, from int) []markLine {
	type group struct {
		x      float64
		texts  []string
		colors map[string]bool
		color  string
		solid  bool
		beyond bool
	}
	var gs []*group
	for _, m := range ms {
		if !finite(m.x) {
			continue
		}
		x, beyond := m.x, ax.beyond(m.x)
		if beyond {
			x = ax.top
			if ax.log {
				x = math.Pow(2, math.Ceil(math.Log2(ax.top)))
			}
		}
		var g *group
		for _, o := range gs {
			if math.Abs(o.x-x) <= 1e-9*math.Max(1, x) {
				g = o
			}
		}
		if g == nil {
			g = &group{x: x, colors: map[string]bool{}, color: m.color}
			gs = append(gs, g)
		}
		text := m.text
		if beyond {
			text += " →"
			g.beyond = true
		}
		g.texts = append(g.texts, text)
		g.colors[m.color] = true
		g.solid = g.solid || m.solid
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].x < gs[j].x })
	out := make([]markLine, 0, len(gs))
	for k, g := range gs {
		color := g.color
		if len(g.colors) > 1 {
			color = "#333333"
		}
		typ, width := "dashed", float32(1.5)
		if g.solid {
			typ, width = "solid", 2.5
		}
		text := strings.Join(g.texts, " · ")
		if g.beyond {
			text += " (beyond the axis)"
		}
		l := vline(g.x, text, color, typ, width)
		// Successive lines put their labels at opposite ends (top, bottom), so two
		// nearby lines' labels never face each other at the same height.
		l.Label.Position = vlinePositions[(k+from)%len(vlinePositions)]
		out = append(out, l)
	}
	return out
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

// dataRange is the span of get over every level of every run (1 when empty or flat).
func dataRange(runs []analyze.Run, get func(*analyze.Level) float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range runs {
		for j := range runs[i].Levels {
			if v := get(&runs[i].Levels[j]); finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if !(hi > lo) {
		return 1
	}
	return hi - lo
}

// labelled is a point drawn with its label.
type labelled struct {
	p    pt
	text string
}

// crowded reports whether a label for p would run into the label of a point already
// labelled, on the narrowest chart (a plot about 300 px wide and 240 px high, 11 px
// text): about 3% of the x range per character of the wider label, 9% of the y range.
func crowded(p pt, text string, shown []labelled, xr, yr float64) bool {
	for _, q := range shown {
		chars := max(len([]rune(text)), len([]rune(q.text)))
		if math.Abs(p[0]-q.p[0]) < 0.03*float64(chars)*xr && math.Abs(p[1]-q.p[1]) < 0.09*yr {
			return true
		}
	}
	return false
}

// stackedHLines places the labels of horizontal lines so that close lines do not
// collide: from the lowest line up, labels go below the line and above it in turn,
// at the left; an identical line (the same value and
// text, from another run) is drawn once. The right end stays free for the labels of
// vertical lines.
func stackedHLines(ls []markLine) []markLine {
	var out []markLine
	seen := map[string]bool{}
	for _, l := range ls {
		key := fmt.Sprintf("%g|%s", *l.YAxis, l.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, l)
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].YAxis < *out[j].YAxis })
	pos := []string{"insideStartBottom", "insideStartTop"}
	for k := range out {
		out[k].Label.Position = pos[k%len(pos)]
	}
	return out
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
