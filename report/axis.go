package report

// The sweep axis shared by the charts that plot against concurrency (or rate), and
// the common chart options.

import (
	"math"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/ceiling-llm/ceiling/analyze"
)

// axis describes the concurrency axis shared by the sweep charts.
type axis struct {
	name string
	log  bool // geometric sweep: log scale, base 2
	min  float64
	max  float64 // the highest tested level
	// top is where the axis ends: beyond max when a ceiling lies past the sweep
	// (up to reachFactor × max), so that every ceiling the caption promises is drawn.
	top  float64
	rate bool // open loop: offered rate instead of concurrency
}

// reachFactor is how far past the highest tested level the concurrency axis extends
// to show a ceiling; one further out is marked at the edge with its value.
const reachFactor = 4

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
		a.name = strings.TrimSuffix(a.name, ")") + ", log₂ scale)"
	}
	a.top = a.max
	return a
}

// reaching returns the axis extended to the ceilings that lie past the sweep (up to
// reachFactor × its highest level), for the charts that mark them.
func (a axis) reaching(runs []analyze.Run) axis {
	if !a.rate {
		for _, r := range runs {
			for _, v := range []*float64{r.Ceilings.KV, r.Ceilings.Batch, r.Ceilings.Knee, r.Ceilings.SLO, r.Ceilings.Errors, r.Ceiling.Concurrency} {
				if v != nil && finite(*v) && *v > a.top && *v <= reachFactor*a.max {
					a.top = *v
				}
			}
		}
	}
	return a
}

// beyond reports whether a concurrency lies past the end of the axis.
func (a axis) beyond(v float64) bool { return v > a.top*(1+1e-9) }

func levelXValue(l *analyze.Level, open bool) float64 {
	if open {
		return l.Rate
	}
	return float64(l.Concurrency)
}

func (a axis) xAxis() opts.XAxis {
	x := opts.XAxis{Type: "value", Name: a.name, Scale: opts.Bool(true)}
	if a.log {
		x.Type = "log"
	}
	return x
}

// patchLogBase2 makes a log x axis use base 2, which matches sweeps that double, and
// extends the axis to a ceiling beyond the sweep.
func patchLogBase2(a axis) optionPatch {
	return optionPatch{fn: func(m map[string]interface{}) {
		xs, ok := m["xAxis"].([]opts.XAxis)
		if !ok || len(xs) == 0 {
			return
		}
		if a.log {
			m["xAxis"] = []map[string]interface{}{{
				"type": "log", "logBase": 2, "name": xs[0].Name,
				"min": math.Pow(2, math.Floor(math.Log2(a.min))), "max": math.Pow(2, math.Ceil(math.Log2(a.top))),
			}}
		} else if a.top > a.max {
			m["xAxis"] = []map[string]interface{}{{"type": "value", "name": xs[0].Name, "scale": true, "max": niceCeil(a.top)}}
		}
	}}
}

// niceCeil rounds v up to a multiple of a power of ten's half, a tidy axis end.
func niceCeil(v float64) float64 {
	if !(v > 0) {
		return v
	}
	step := math.Pow(10, math.Floor(math.Log10(v))) / 2
	return math.Ceil(v/step) * step
}

// baseOpts are the options every chart shares; grid overrides the default plot area
// (go-echarts appends grids, so a chart must not add a second one).
func baseOpts(title string, grid ...opts.Grid) []charts.GlobalOpts {
	g := opts.Grid{Top: "56"}
	if len(grid) > 0 {
		g = grid[0]
	}
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithInitializationOpts(opts.Initialization{Renderer: "svg", PageTitle: title}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Left: "center"}),
		charts.WithGridOpts(g),
		charts.WithColorsOpts(opts.Colors(palette)),
	}
}

func yAxis(name string) opts.YAxis {
	return opts.YAxis{Type: "value", Name: name}
}
