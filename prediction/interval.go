package prediction

import (
	"fmt"
	"math"
	"sort"
)

// The intervals of ceiling's own predictions (whatif, plan's throughput): a
// predicted figure v carries the interval [v·e^−q, v·e^q], where q is the
// split-conformal quantile, at the nominal coverage, of the absolute log errors
// |ln(predicted ÷ measured)| of held-out predictions of public measurements of the
// same kind of change (docs/validation.md; docs/predictions.md says why). The
// quantiles are data: calibration_table.go is written by
// `go test ./analyze -run TestValidation -update` from analyze/testdata/validation.

// ChangeKind is the kind of change a prediction carries a measurement across. A
// prediction across several changes takes the widest of their intervals.
type ChangeKind string

// The kinds of change, from the narrowest (usually) to the widest.
const (
	ChangeConcurrency ChangeKind = "concurrency"        // another concurrency, same deployment
	ChangeLengths     ChangeKind = "lengths"            // other request lengths, same deployment
	ChangeEngine      ChangeKind = "engine"             // another serving engine, same GPU, precision and shape
	ChangePrecision   ChangeKind = "precision-or-shape" // another weight or KV precision or parallel shape, same GPU
	ChangeGPU         ChangeKind = "gpu"                // another GPU
)

// ChangeKinds lists every kind in the order of the constants.
func ChangeKinds() []ChangeKind {
	return []ChangeKind{ChangeConcurrency, ChangeLengths, ChangeEngine, ChangePrecision, ChangeGPU}
}

// Describe names the kind in words.
func (k ChangeKind) Describe() string {
	switch k {
	case ChangeConcurrency:
		return "another concurrency"
	case ChangeLengths:
		return "other request lengths"
	case ChangeEngine:
		return "another engine"
	case ChangePrecision:
		return "another precision or shape"
	case ChangeGPU:
		return "another GPU"
	}
	return string(k)
}

// NominalCoverage is the share of held-out measurements an interval is calibrated
// to hold.
const NominalCoverage = 0.8

// MinCalibrationErrors is the fewest held-out errors a kind needs for its
// conformal quantile; with fewer the interval is the widest error seen × 1.5
// (UncalibratedWidening), and says so.
const MinCalibrationErrors = 8

// UncalibratedWidening widens the largest observed log error of a kind with too
// few held-out errors to calibrate.
const UncalibratedWidening = 1.5

// fallbackLogHalfWidth is the interval of a kind without a single held-out error:
// a factor of 3 either way (e^1.1), wide on purpose.
const fallbackLogHalfWidth = 1.1

// Calibration is the interval of one kind of change.
type Calibration struct {
	Kind ChangeKind `json:"kind"`
	// Nominal is the coverage the interval is calibrated for (0.8).
	Nominal float64 `json:"nominal_coverage"`
	// Errors is how many held-out errors the quantile came from, over Deployments
	// measured deployments.
	Errors      int `json:"held_out_errors"`
	Deployments int `json:"deployments"`
	// LogHalfWidth is q: the interval of a prediction v is [v·e^−q, v·e^q].
	LogHalfWidth float64 `json:"log_half_width"`
	// Calibrated is false where the kind had fewer than MinCalibrationErrors held-out
	// errors: the interval is then the widest error seen × UncalibratedWidening.
	Calibrated bool `json:"calibrated"`
}

// Bounds is the interval around v.
func (c Calibration) Bounds(v float64) (low, high float64) {
	return v * math.Exp(-c.LogHalfWidth), v * math.Exp(c.LogHalfWidth)
}

// String states the interval as a user reads it.
func (c Calibration) String() string {
	lo, hi := c.Bounds(1)
	s := fmt.Sprintf("%.0f%% interval for %s: predicted ×%.2f to ×%.2f, ", c.Nominal*100, c.Kind.Describe(), lo, hi)
	if !c.Calibrated {
		return s + fmt.Sprintf("NOT calibrated: only %d held-out errors of public measurements (fewer than %d), so the widest seen × %.1f (docs/validation.md)",
			c.Errors, MinCalibrationErrors, UncalibratedWidening)
	}
	return s + fmt.Sprintf("split-conformal from %d held-out errors over %d public deployments (docs/validation.md)", c.Errors, c.Deployments)
}

// Conformal is the interval of a kind from its held-out absolute log errors: the
// ⌈(n+1)·nominal⌉-th smallest (split conformal prediction: Vovk et al. 2005; Lei et
// al., "Distribution-free predictive inference for regression", JASA 2018), which
// covers a new error of the same distribution with probability ≥ nominal. With fewer
// than MinCalibrationErrors errors, or where that rank exceeds n, the interval is
// the largest error × UncalibratedWidening, marked not calibrated.
func Conformal(kind ChangeKind, absLogErrs []float64, deployments int, nominal float64) Calibration {
	c := Calibration{Kind: kind, Nominal: nominal, Errors: len(absLogErrs), Deployments: deployments}
	if len(absLogErrs) == 0 {
		c.LogHalfWidth = fallbackLogHalfWidth
		return c
	}
	s := append([]float64(nil), absLogErrs...)
	sort.Float64s(s)
	rank := int(math.Ceil(float64(len(s)+1) * nominal))
	if len(s) < MinCalibrationErrors || rank > len(s) {
		c.LogHalfWidth = math.Max(s[len(s)-1]*UncalibratedWidening, 0.1)
		return c
	}
	c.LogHalfWidth, c.Calibrated = s[rank-1], true
	return c
}

// IntervalFor is the stored calibration of the widest of the kinds given (a
// prediction across several changes is no surer than across its least certain
// one). No kind: the concurrency kind's.
func IntervalFor(kinds ...ChangeKind) Calibration {
	if len(kinds) == 0 {
		kinds = []ChangeKind{ChangeConcurrency}
	}
	var out Calibration
	found := false
	for _, k := range kinds {
		c := Calibration{Kind: k, Nominal: NominalCoverage, LogHalfWidth: fallbackLogHalfWidth}
		for _, t := range calibrationTable() {
			if t.Kind == k {
				c = t
			}
		}
		if !found || c.LogHalfWidth > out.LogHalfWidth {
			out, found = c, true
		}
	}
	return out
}

// StoredCalibrations is the table whatif uses, one row per kind that has one.
func StoredCalibrations() []Calibration { return calibrationTable() }
