package prediction

import (
	"math"
	"strings"
	"testing"
)

// errsOf gives each error its own deployment, or every error one of d deployments
// in turn.
func errsOf(abs []float64, deployments int) []HeldOutError {
	out := make([]HeldOutError, len(abs))
	for i, a := range abs {
		out[i] = HeldOutError{AbsLog: a, Deployment: string(rune('a' + i%deployments))}
	}
	return out
}

// inCampaign puts every error in campaign c.
func inCampaign(errs []HeldOutError, c string) []HeldOutError {
	for i := range errs {
		errs[i].Campaign = c
	}
	return errs
}

// Split conformal over deployments: with one error per deployment, the
// ⌈(n+1)·0.8⌉-th smallest; a deployment with many errors weighs no more than one
// with few; too few errors or deployments give the widest × 1.5, marked not
// calibrated; none gives the wide fallback.
func TestConformal(t *testing.T) {
	errs := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0} // n = 10: rank ⌈8.8⌉ = 9
	for _, c := range []struct {
		name       string
		errs       []HeldOutError
		want       float64
		calibrated bool
	}{
		{"ten deployments", errsOf(errs, 10), 0.9, true},
		{"unordered", errsOf([]float64{1.0, 0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.5}, 10), 0.9, true},
		{"seven errors", errsOf(errs[:7], 7), 0.7 * UncalibratedWidening, false},
		{"eight errors: rank 8 of 8", errsOf(errs[:8], 8), 0.8, true},
		{"ten errors of four deployments: 0.8 × 5/4 ≥ 1", errsOf(errs, 4), 1.0 * UncalibratedWidening, false},
		// Deployment a has nine small errors, b-e one large each: a weighs 1/5, so
		// the quantile reaches into the large ones (weighted share 0.96 needed).
		{"one deployment's many errors weigh as one", append(errsOf([]float64{.1, .1, .1, .1, .1, .1, .1, .1, .1}, 1),
			HeldOutError{AbsLog: 1, Deployment: "b"}, HeldOutError{AbsLog: 2, Deployment: "c"}, HeldOutError{AbsLog: 3, Deployment: "d"}, HeldOutError{AbsLog: 4, Deployment: "e"}), 4, true},
		// The same with the nine small errors of nine deployments of one
		// campaign: the campaign, not the deployment, weighs one.
		{"one campaign's many deployments weigh as one", append(inCampaign(errsOf([]float64{.1, .1, .1, .1, .1, .1, .1, .1, .1}, 9), "p"),
			HeldOutError{AbsLog: 1, Deployment: "j", Campaign: "q"}, HeldOutError{AbsLog: 2, Deployment: "k", Campaign: "r"},
			HeldOutError{AbsLog: 3, Deployment: "l", Campaign: "s"}, HeldOutError{AbsLog: 4, Deployment: "m", Campaign: "t"}), 4, true},
		{"ten deployments of one campaign: too few units", inCampaign(errsOf(errs, 10), "p"), 1.0 * UncalibratedWidening, false},
		{"none", nil, fallbackLogHalfWidth, false},
	} {
		got := Conformal(ChangeGPU, c.errs, NominalCoverage)
		if math.Abs(got.LogHalfWidth-c.want) > 1e-12 || got.Calibrated != c.calibrated || got.Errors != len(c.errs) {
			t.Errorf("%s: %+v, want half-width %g calibrated %t", c.name, got, c.want, c.calibrated)
		}
	}
	// A new error drawn from the same errors is covered about as often as claimed.
	many := make([]float64, 99)
	for i := range many {
		many[i] = float64(i + 1)
	}
	q := Conformal(ChangeGPU, errsOf(many, 99), NominalCoverage).LogHalfWidth
	covered := 0
	for _, e := range many {
		if e <= q {
			covered++
		}
	}
	if share := float64(covered) / float64(len(many)); share < 0.8 || share > 0.82 {
		t.Errorf("coverage of its own errors %.3f, want 0.80-0.82", share)
	}
}

// The stored table has one row per kind with data; a prediction across several
// kinds takes the widest; the text says when a kind is not calibrated.
func TestIntervalFor(t *testing.T) {
	widest := 0.0
	for _, k := range ChangeKinds() {
		c := IntervalFor(k)
		if c.Kind != k || c.LogHalfWidth <= 0 || c.Nominal != NominalCoverage {
			t.Errorf("%s: %+v", k, c)
		}
		widest = math.Max(widest, c.LogHalfWidth)
	}
	if got := IntervalFor(ChangeKinds()...); got.LogHalfWidth != widest {
		t.Errorf("all kinds: %+v, want the widest %g", got, widest)
	}
	lo, hi := Calibration{LogHalfWidth: math.Log(2)}.Bounds(100)
	if math.Abs(lo-50) > 1e-9 || math.Abs(hi-200) > 1e-9 {
		t.Errorf("bounds of 100 at ×2: %g, %g", lo, hi)
	}
	if s := (Calibration{Kind: ChangeEngine, Nominal: 0.8, Errors: 3, LogHalfWidth: 1}).String(); !strings.Contains(s, "NOT calibrated") {
		t.Errorf("uncalibrated text: %s", s)
	}
}

// An interval with a test-set score says how it held there, beside where it was
// calibrated; one without says nothing of a test set.
func TestCalibrationStringTestSet(t *testing.T) {
	c := Calibration{Kind: ChangeGPU, Nominal: 0.8, Errors: 100, Deployments: 20, LogHalfWidth: 0.3, Calibrated: true}
	if s := c.String(); strings.Contains(s, "test set") {
		t.Errorf("no test set, yet: %s", s)
	}
	c.TestSets = []TestScore{{Set: "DeepSeek-R1-0528 on SGLang", Points: 66, Covered: 28, MedianAbsErr: 0.34}, {Set: "second", Points: 10, Covered: 9, MedianAbsErr: 0.1, Note: "read before"}}
	s := c.String()
	for _, want := range []string{"on a test set no fit saw (DeepSeek-R1-0528 on SGLang) it held 42% of 66 points, median error 34%", "(second) it held 90% of 10 points, median error 10% (read before)"} {
		if !strings.Contains(s, want) {
			t.Errorf("%s\nlacks %q", s, want)
		}
	}
}

// A coverage just below its goal never reads as meeting it.
func TestPercent(t *testing.T) {
	for _, c := range []struct {
		v, goal float64
		want    string
	}{
		{0.799, 0.8, "79.9%"},
		{0.7951, 0.8, "79.5%"},
		{0.794, 0.8, "79%"},
		{0.8, 0.8, "80%"},
		{0.806, 0.8, "81%"},
		{0.75, 0.8, "75%"},
	} {
		if got := Percent(c.v, c.goal); got != c.want {
			t.Errorf("Percent(%g, %g) = %q, want %q", c.v, c.goal, got, c.want)
		}
	}
}

// An interval that weighs campaigns says so, and says its held-out coverage
// was measured leaving campaigns out.
func TestCalibrationStringCampaigns(t *testing.T) {
	c := Calibration{Kind: ChangeGPU, Nominal: 0.8, Errors: 100, Deployments: 20, Campaigns: 7, LogHalfWidth: 0.4, Calibrated: true, HeldOutCoverage: 0.799}
	s := c.String()
	for _, want := range []string{"over 20 public deployments in 7 campaigns", "holding 79.9% of them when sized without their own campaigns"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	c.Campaigns = 0
	if s := c.String(); !strings.Contains(s, "without their own deployments") || strings.Contains(s, "campaigns") {
		t.Errorf("without campaigns: %q", s)
	}
}

// A test set's score within one engine release is said beside its whole score.
func TestTestSetTextSameRelease(t *testing.T) {
	c := Calibration{Kind: ChangeGPUAMD, Nominal: 0.8, Errors: 100, Deployments: 20, LogHalfWidth: 0.4, Calibrated: true,
		TestSets: []TestScore{{Set: "s", Points: 200, Covered: 110, MedianAbsErr: 0.48, SameRelease: &TestScore{Points: 50, Covered: 50, MedianAbsErr: 0.12}}}}
	want := "it held 55% of 200 points, median error 48%, and between deployments of one engine release, as this prediction assumes, 100% of 50, median error 12%"
	if s := c.String(); !strings.Contains(s, want) {
		t.Errorf("%q lacks %q", s, want)
	}
	c.TestSets[0].SameRelease = nil
	if s := c.String(); strings.Contains(s, "one engine release") {
		t.Errorf("without a same-release score: %q", s)
	}
}
