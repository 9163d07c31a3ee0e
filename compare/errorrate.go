package compare

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The error rate is compared on every matched level, valid or not (a level that
// failed outright is invalid, and is exactly the regression to catch). Its test
// is Fisher's exact test of the two sides' error counts (repeats pooled), its
// interval the Agresti–Caffo interval of the difference of the rates (the Wald
// interval with one error and one success added to each side, which keeps its
// coverage near 95% down to zero errors). Its threshold is on the success rate:
// a regression lowers the share of requests that succeed by more than the
// threshold, (1 − e_c) ÷ (1 − e_b) − 1 < −threshold.

// diffErrorRate compares the error counts at one point.
func diffErrorRate(base, cand []unit) MetricDiff {
	d := MetricDiff{Metric: "error_rate", Verdict: NotTested, Method: methodExact}
	count := func(us []unit) (errs, reqs int) {
		for _, u := range us {
			errs += u.level.Errors
			reqs += u.level.Requests
		}
		return errs, reqs
	}
	xb, nb := count(base)
	xc, nc := count(cand)
	if nb == 0 || nc == 0 {
		d.Note = "no requests on a side"
		return d
	}
	eb, ec := float64(xb)/float64(nb), float64(xc)/float64(nc)
	d.Baseline, d.Candidate, d.Change = f64(eb), f64(ec), f64(ec-eb)
	d.n = [2]int{nb, nc}
	pb, pc := float64(xb+1)/float64(nb+2), float64(xc+1)/float64(nc+2)
	se := math.Sqrt(pb*(1-pb)/float64(nb+2) + pc*(1-pc)/float64(nc+2))
	q := distuv.UnitNormal.Quantile(1 - alpha/2)
	d.se = se
	d.Low, d.High = f64(pc-pb-q*se), f64(pc-pb+q*se)
	d.P = f64(fisherExact(xb, nb, xc, nc))
	return d
}

// fisherExact is the two-sided p-value of Fisher's exact test of x1 of n1 against
// x2 of n2: the probability, given the margins, of every table no more likely
// than the one observed.
func fisherExact(x1, n1, x2, n2 int) float64 {
	k := x1 + x2 // errors in all
	lo, hi := max(0, k-n2), min(k, n1)
	// log P(X = x), X hypergeometric: C(n1, x) C(n2, k−x) / C(n1+n2, k).
	lchoose := func(n, r int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(r + 1))
		c, _ := math.Lgamma(float64(n - r + 1))
		return a - b - c
	}
	total := lchoose(n1+n2, k)
	logp := func(x int) float64 { return lchoose(n1, x) + lchoose(n2, k-x) - total }
	obs := logp(x1)
	var p float64
	for x := lo; x <= hi; x++ {
		if lp := logp(x); lp <= obs+1e-7 { // relative tolerance, as R's fisher.test
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}
