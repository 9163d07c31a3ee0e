package analyze

import (
	"math"
	"sort"
)

// Cost at matched interactivity: several deployments (measured runs, and planners'
// predictions, marked) compared at the same per-user speed rather than at the same
// concurrency, the way InferenceX compares performance per dollar: each curve of
// output tok/s per GPU against per-user tok/s is interpolated linearly between its
// levels at a common set of per-user speeds, and the cost per million output tokens
// there is GPU-hour price ÷ (tok/s per GPU × 3600) × 10⁶. A curve is never
// extrapolated: outside its measured speeds it has no figure.

// MatchedSpeedMethod states the method in the analysis.
const MatchedSpeedMethod = "tok/s per GPU interpolated linearly along each curve of tok/s per GPU against per-user tok/s (valid levels only, never extrapolated), at per-user speeds two or more curves reach; cost = $/GPU-hour ÷ (tok/s per GPU × 3600) × 10⁶ (the InferenceX perf-per-dollar method)"

// speedCurve is one curve's (per-user speed, tok/s per GPU) points.
type speedCurve struct {
	name      string
	predicted bool
	pts       [][2]float64 // sorted by speed
}

// MatchSpeeds compares a's runs and predictions at common per-user speeds; nil
// when fewer than two curves have two points.
func MatchSpeeds(a *Analysis, gpuHourCost float64) *MatchedSpeed {
	var curves []speedCurve
	for _, r := range a.Runs {
		if r.Decision == nil {
			continue
		}
		c := speedCurve{name: r.RunID}
		for i, ld := range r.Decision.Levels {
			if i < len(r.Levels) && r.Levels[i].Valid && ld.PerUserTokS > 0 && ld.OutputTokSPerGPU > 0 {
				c.pts = append(c.pts, [2]float64{ld.PerUserTokS, ld.OutputTokSPerGPU})
			}
		}
		curves = append(curves, c)
	}
	seen := map[string]bool{}
	for _, p := range a.Predictions {
		if seen[p.Source] {
			continue // one prediction beside several runs: one curve
		}
		seen[p.Source] = true
		c := speedCurve{name: "PREDICTED " + p.Planner, predicted: true}
		for _, pt := range p.Points {
			if u, x := pt.Predicted.PerUserTokS, pt.Predicted.OutputTokSPerGPU; u != nil && x != nil && *u > 0 {
				c.pts = append(c.pts, [2]float64{*u, *x})
			}
		}
		curves = append(curves, c)
	}
	usable := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range curves {
		sort.Slice(curves[i].pts, func(a, b int) bool { return curves[i].pts[a][0] < curves[i].pts[b][0] })
		if n := len(curves[i].pts); n >= 2 {
			usable++
			lo, hi = math.Min(lo, curves[i].pts[0][0]), math.Max(hi, curves[i].pts[n-1][0])
		}
	}
	if usable < 2 {
		return nil
	}
	m := &MatchedSpeed{Method: MatchedSpeedMethod, Speeds: []float64{}}
	if gpuHourCost > 0 {
		m.GPUHourCost = pf(gpuHourCost)
	}
	for _, s := range niceGrid(lo, hi) {
		n := 0
		for _, c := range curves {
			if _, ok := c.at(s); ok {
				n++
			}
		}
		if n >= 2 {
			m.Speeds = append(m.Speeds, s)
		}
	}
	m.Speeds = thin(m.Speeds, 8)
	if len(m.Speeds) == 0 {
		return nil
	}
	for _, c := range curves {
		mc := MatchedCurve{Name: c.name, Predicted: c.predicted}
		for _, s := range m.Speeds {
			x, ok := c.at(s)
			if !ok {
				mc.OutputTokSPerGPU = append(mc.OutputTokSPerGPU, nil)
				mc.CostPerMOutput = append(mc.CostPerMOutput, nil)
				continue
			}
			mc.OutputTokSPerGPU = append(mc.OutputTokSPerGPU, pf(x))
			if gpuHourCost > 0 {
				mc.CostPerMOutput = append(mc.CostPerMOutput, pf(gpuHourCost/(x*3600)*1e6))
			} else {
				mc.CostPerMOutput = append(mc.CostPerMOutput, nil)
			}
		}
		m.Curves = append(m.Curves, mc)
	}
	return m
}

// at is the curve's tok/s per GPU at per-user speed s, interpolated linearly
// between the two points around it; false outside the curve.
func (c speedCurve) at(s float64) (float64, bool) {
	p := c.pts
	if len(p) < 2 || s < p[0][0] || s > p[len(p)-1][0] {
		return 0, false
	}
	for i := 1; i < len(p); i++ {
		if s <= p[i][0] {
			a, b := p[i-1], p[i]
			if b[0] == a[0] {
				return (a[1] + b[1]) / 2, true
			}
			w := (s - a[0]) / (b[0] - a[0])
			return a[1] + w*(b[1]-a[1]), true
		}
	}
	return 0, false
}

// niceGrid is a grid of round per-user speeds over [lo, hi], fine enough (about
// 50 steps of 1, 2 or 5 × 10^k) that a narrow overlap of two curves holds some.
func niceGrid(lo, hi float64) []float64 {
	raw := (hi - lo) / 50
	if !(raw > 0) {
		return []float64{lo}
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// thin keeps at most n values of v, evenly spread, the first and last included.
func thin(v []float64, n int) []float64 {
	if len(v) <= n {
		return v
	}
	out := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, v[i*(len(v)-1)/(n-1)])
	}
	return out
}
