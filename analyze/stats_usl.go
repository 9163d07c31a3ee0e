package analyze

import "math"

// usl is Gunther's Universal Scalability Law (N. J. Gunther, Guerrilla Capacity
// Planning, Springer 2007, ch. 4) with throughput at one client λ: σ is contention
// (the serial fraction), κ crosstalk (the coherency delay between pairs of clients).
// The equation numbers are those of B. Schwartz, Practical Scalability Analysis with
// the Universal Scalability Law (VividCortex 2015), as github.com/codahale/usl cites
// them.
type usl struct {
	Sigma, Kappa, Lambda float64
}

// Throughput is X(N) = λN / (1 + σ(N−1) + κN(N−1)) (Schwartz eq. 3). With σ, κ ≥ 0
// the denominator is at least 1 for N ≥ 1; below 1 it can reach 0 or less, where the
// result is infinite or negative and means nothing (a plot skips it; a fit sees a large
// residual).
func (m usl) Throughput(n float64) float64 {
	return m.Lambda * n / (1 + m.Sigma*(n-1) + m.Kappa*n*(n-1))
}

// Nmax is the concurrency of peak throughput, ⌊√((1−σ)/κ)⌋ unfloored (Schwartz
// eq. 4). ok is false when there is no peak: κ = 0 (throughput rises for ever) or
// σ ≥ 1 (it never rises).
func (m usl) Nmax() (n float64, ok bool) {
	if m.Kappa <= 0 || m.Sigma >= 1 {
		return 0, false
	}
	return math.Sqrt((1 - m.Sigma) / m.Kappa), true
}

// Curve samples X(N) at steps evenly spaced points from 1 to maxN, for plotting.
func (m usl) Curve(maxN float64, steps int) []point {
	if steps < 2 || maxN <= 1 {
		return []point{{1, m.Throughput(1)}}
	}
	out := make([]point, steps)
	for i := range out {
		n := 1 + (maxN-1)*float64(i)/float64(steps-1)
		out[i] = point{n, m.Throughput(n)}
	}
	return out
}
