package analyze

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// point is one measured (concurrency, throughput) pair.
type point struct{ N, X float64 }

// Throughput evaluates the fitted curve at concurrency n.
func (f USLFit) Throughput(n float64) float64 { return f.model().Throughput(n) }

// model is the fitted law without the goodness of fit.
func (f USLFit) model() usl { return usl{Sigma: f.Sigma, Kappa: f.Kappa, Lambda: f.Lambda} }

// peakReach bounds how far past the highest level tested the fit's peak is
// stated: a peak 10× beyond the data is the curve's arithmetic on a κ near 0 (a
// peak of 125,706,928 from levels up to 8), not a prediction.
const peakReach = 10

// peakWithinReach is the fit's peak concurrency when it has one within peakReach ×
// maxN, the highest level fitted; otherwise nil and the words that replace it.
func peakWithinReach(m usl, maxN float64) (*float64, string) {
	n, ok := m.Nmax()
	switch {
	case ok && n <= peakReach*maxN:
		return &n, ""
	case ok:
		return nil, fmt.Sprintf("no peak within the model's reach (κ ≈ 0: the fit's peak lies beyond %d× the highest level tested, %s)", peakReach, groupDigits(int64(math.Round(maxN))))
	case m.Sigma >= 1:
		return nil, "no peak (σ ≥ 1: throughput does not rise with concurrency)"
	}
	return nil, "no peak (κ = 0: throughput rises over the whole range tested)"
}

// fitUSL fits the Universal Scalability Law to (concurrency, throughput) points by
// least squares on the throughput, with σ, κ ≥ 0 and λ > 0.
//
// For fixed σ and κ the model is linear in λ, so λ has a closed form
// (Σ X·g / Σ g², g = N / (1+σ(N−1)+κN(N−1))) and only σ and κ are searched, by
// gonum's Nelder-Mead on |σ| and |κ| (the absolute value keeps them non-negative
// without a penalty), restarted once from its own result to polish the minimum. κ is
// searched scaled by the largest N² so that both coordinates have comparable effect.
func fitUSL(points []point) (*USLFit, error) {
	var pts []point
	maxN := 0.0
	for _, p := range points {
		if p.N > 0 && p.X > 0 && !math.IsNaN(p.X) && !math.IsInf(p.X, 0) {
			pts = append(pts, p)
			maxN = math.Max(maxN, p.N)
		}
	}
	if len(pts) < 3 {
		return nil, fmt.Errorf("USL fit needs at least 3 levels with throughput, have %d", len(pts))
	}
	distinct := map[float64]bool{}
	for _, p := range pts {
		distinct[p.N] = true
	}
	if len(distinct) < 3 {
		return nil, errors.New("USL fit needs at least 3 distinct concurrency levels")
	}
	kScale := maxN * maxN
	params := func(x []float64) (sigma, kappa float64) {
		return math.Abs(x[0]), math.Abs(x[1]) / kScale
	}
	lambdaFor := func(sigma, kappa float64) float64 {
		var num, den float64
		shape := usl{Sigma: sigma, Kappa: kappa, Lambda: 1}
		for _, p := range pts {
			g := shape.Throughput(p.N)
			num += p.X * g
			den += g * g
		}
		return num / den
	}
	sse := func(x []float64) float64 {
		sigma, kappa := params(x)
		m := usl{Sigma: sigma, Kappa: kappa, Lambda: lambdaFor(sigma, kappa)}
		var s float64
		for _, p := range pts {
			r := p.X - m.Throughput(p.N)
			s += r * r
		}
		return s
	}
	// Start from the best of a coarse grid, so that Nelder-Mead begins in the right basin.
	best, start := math.Inf(1), []float64{0, 0}
	for _, s := range []float64{0, 0.001, 0.01, 0.03, 0.1, 0.3, 0.6, 0.9} {
		for _, k := range []float64{0, 0.01, 0.1, 0.3, 1, 3, 10} {
			if v := sse([]float64{s, k}); v < best {
				best, start = v, []float64{s, k}
			}
		}
	}
	problem := optimize.Problem{Func: sse}
	settings := &optimize.Settings{
		Converger:         &optimize.FunctionConverge{Absolute: 1e-14, Relative: 1e-14, Iterations: 200},
		FuncEvaluations:   20000,
		MajorIterations:   0,
		GradientThreshold: 0,
	}
	x := start
	for range 3 {
		res, err := optimize.Minimize(problem, x, settings, &optimize.NelderMead{})
		if err != nil && res == nil {
			return nil, fmt.Errorf("USL fit: %w", err)
		}
		x = res.X
	}
	sigma, kappa := params(x)
	f := &USLFit{Sigma: sigma, Kappa: kappa, Lambda: lambdaFor(sigma, kappa)}
	f.NMax, f.NoPeak = peakWithinReach(f.model(), maxN)
	var mean float64
	for _, p := range pts {
		mean += p.X
	}
	mean /= float64(len(pts))
	var ssTot float64
	for _, p := range pts {
		ssTot += (p.X - mean) * (p.X - mean)
	}
	f.R2 = 1
	if ssTot > 0 {
		f.R2 = 1 - sse(x)/ssTot
	}
	return f, nil
}
