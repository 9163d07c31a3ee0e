package prediction

import (
	"fmt"
	"math"
	"sort"
	"strings"
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
//
// Another GPU is two kinds: the public predictions to, from or between AMD's
// GPUs (ROCm builds of the engines, whose kernels and attention backends differ
// more from GPU to GPU and release to release) miss about twice as far as those
// between NVIDIA's (docs/validation.md), so one interval for both would be too
// wide for the one and too narrow for the other.
type ChangeKind string

// The kinds of change, from the narrowest (usually) to the widest.
const (
	ChangeConcurrency ChangeKind = "concurrency"        // another concurrency, same deployment
	ChangeLengths     ChangeKind = "lengths"            // other request lengths, same deployment
	ChangeEngine      ChangeKind = "engine"             // another release or publisher of the engine, same GPU, precision and shape
	ChangePrecision   ChangeKind = "precision-or-shape" // another weight or KV precision or parallel shape, same GPU
	ChangeGPU         ChangeKind = "gpu"                // another GPU, both NVIDIA's
	ChangeGPUAMD      ChangeKind = "gpu-amd"            // another GPU, from, to or between AMD's
)

// ChangeKinds lists every kind in the order of the constants.
func ChangeKinds() []ChangeKind {
	return []ChangeKind{ChangeConcurrency, ChangeLengths, ChangeEngine, ChangePrecision, ChangeGPU, ChangeGPUAMD}
}

// Describe names the kind in words.
func (k ChangeKind) Describe() string {
	switch k {
	case ChangeConcurrency:
		return "another concurrency"
	case ChangeLengths:
		return "other request lengths"
	case ChangeEngine:
		return "another engine release or publisher"
	case ChangePrecision:
		return "another precision or shape"
	case ChangeGPU:
		return "another GPU (NVIDIA's)"
	case ChangeGPUAMD:
		return "another GPU, to, from or between AMD's"
	}
	return string(k)
}

// NominalCoverage is the share of held-out measurements an interval is calibrated
// to hold.
const NominalCoverage = 0.8

// MinCalibrationErrors is the fewest held-out errors a kind needs for its
// conformal quantile; with fewer (or too few deployments, see Conformal) the
// interval is the widest error seen × 1.5 (UncalibratedWidening), and says so.
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
	// Campaigns is how many campaigns (a publisher with one engine release) those
	// deployments were measured in, where the quantile weighs each campaign one;
	// 0 where it weighs each deployment one.
	Campaigns int `json:"campaigns,omitempty"`
	// LogHalfWidth is q: the interval of a prediction v is [v·e^−q, v·e^q].
	LogHalfWidth float64 `json:"log_half_width"`
	// Calibrated is false where the kind had fewer than MinCalibrationErrors held-out
	// errors: the interval is then the widest error seen × UncalibratedWidening.
	Calibrated bool `json:"calibrated"`
	// HeldOutCoverage is the share of the errors it was calibrated on that fall
	// inside the interval calibrated without their two deployments (leave one
	// deployment out; the lower of per point and per target deployment): what the
	// interval held on errors it was not sized with. 0: not scored.
	HeldOutCoverage float64 `json:"held_out_coverage,omitempty"`
	// PerUser is the interval of the per-user speed (and so TPOT), calibrated the
	// same way on the per-user errors; nil where none was (the throughput's then).
	PerUser *Calibration `json:"per_user,omitempty"`
	// TTFT is the interval of the time to first token, calibrated the same way on
	// the TTFT errors (public points that publish one); nil where none was (then
	// the throughput's).
	TTFT *Calibration `json:"ttft,omitempty"`
	// TestSets is how this interval did on each test set no fit saw, in the
	// order they were read (none: no prediction of this kind there).
	TestSets []TestScore `json:"test_sets,omitempty"`
}

// TestScore is how a kind's run-time prediction and interval did on measurements
// held out from every fit (docs/validation.md, section 4): a check of the
// calibration on data it was not fitted to, shown beside the interval so that a
// reader sees how far it held there.
type TestScore struct {
	Set     string `json:"set"` // what the test set is, e.g. "DeepSeek-R1-0528 on SGLang"
	Points  int    `json:"points"`
	Covered int    `json:"covered"` // points inside their interval
	// MedianAbsErr is the median absolute error, a fraction (0.34: 34%).
	MedianAbsErr float64 `json:"median_abs_error"`
	// Note qualifies the score, e.g. that the set was read before the kind was
	// defined, so that it is no clean test of it ("" when it is one).
	Note string `json:"note,omitempty"`
	// SameRelease is the score on the predictions between two deployments of one
	// engine release, as a what-if assumes; nil where the set has none or where
	// none of its predictions crosses releases.
	SameRelease *TestScore `json:"same_release,omitempty"`
}

// User is the calibration of the per-user speed: PerUser, else c itself.
func (c Calibration) User() Calibration {
	if c.PerUser != nil {
		return *c.PerUser
	}
	return c
}

// TimeToFirstToken is the calibration of the TTFT: TTFT, else c itself.
func (c Calibration) TimeToFirstToken() Calibration {
	if c.TTFT != nil {
		return *c.TTFT
	}
	return c
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
		return s + fmt.Sprintf("NOT calibrated: only %d held-out errors over %d public deployments, too few, so the widest seen × %.1f (docs/validation.md)",
			c.Errors, c.Deployments, UncalibratedWidening) + c.testSetText()
	}
	s += fmt.Sprintf("split-conformal from %d held-out errors over %d public deployments", c.Errors, c.Deployments)
	if c.Campaigns > 0 {
		s += fmt.Sprintf(" in %d campaigns (a publisher with one engine release), each weighing one", c.Campaigns)
	}
	if h := c.HeldOutText(); h != "" {
		s += ", " + h
	}
	return s + " (docs/validation.md)" + c.testSetText()
}

// HeldOutText says how much of its errors the interval held when sized without
// their own campaigns (or deployments, where it weighs deployments), "" where
// that was not scored.
func (c Calibration) HeldOutText() string {
	if c.HeldOutCoverage <= 0 {
		return ""
	}
	unit := "deployments"
	if c.Campaigns > 0 {
		unit = "campaigns"
	}
	return fmt.Sprintf("holding %s of them when sized without their own %s", Percent(c.HeldOutCoverage, c.Nominal), unit)
}

// Percent prints a coverage v (a fraction) in whole percent, or to a tenth
// where whole percent would round a miss of goal up to it (0.799 against 0.8
// is 79.9%, not 80%).
func Percent(v, goal float64) string {
	if v < goal-1e-9 && math.Round(v*100) >= math.Round(goal*100) {
		return fmt.Sprintf("%.1f%%", math.Floor(v*1000)/10)
	}
	return fmt.Sprintf("%.0f%%", v*100)
}

// testSetText says how the interval held on each test set ("" without one).
func (c Calibration) testSetText() string {
	var b strings.Builder
	for _, t := range c.TestSets {
		if t.Points == 0 {
			continue
		}
		fmt.Fprintf(&b, "; on a test set no fit saw (%s) it held %.0f%% of %d points, median error %.0f%%",
			t.Set, float64(t.Covered)/float64(t.Points)*100, t.Points, t.MedianAbsErr*100)
		if t.Note != "" {
			b.WriteString(" (" + t.Note + ")")
		}
		if r := t.SameRelease; r != nil && r.Points > 0 {
			fmt.Fprintf(&b, ", and between deployments of one engine release, as this prediction assumes, %.0f%% of %d, median error %.0f%%",
				float64(r.Covered)/float64(r.Points)*100, r.Points, r.MedianAbsErr*100)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + " (docs/validation.md)"
}

// HeldOutError is one held-out prediction's absolute log error and the measured
// deployment it predicted.
type HeldOutError struct {
	AbsLog     float64
	Deployment string
	// Campaign is the publisher and engine release the deployment was measured
	// in, where known: then it, not the deployment, is Conformal's exchangeable
	// unit.
	Campaign string
}

// unit is the exchangeable unit an error belongs to: its campaign where known,
// else its deployment.
func (e HeldOutError) unit() string {
	if e.Campaign != "" {
		return "campaign " + e.Campaign
	}
	return "deployment " + e.Deployment
}

// Conformal is the interval of a kind from its held-out absolute log errors, split
// conformal prediction (Vovk et al. 2005; Lei et al., "Distribution-free predictive
// inference for regression", JASA 2018) over groups: errors of one campaign (a
// publisher's measurements with one engine release) are alike (its kernels, its
// engine build, its harness), so the exchangeable unit is the campaign where the
// errors name one, else the deployment, and each unit's errors carry a total
// weight of 1 whatever their number. q is the smallest error whose weighted share
// of errors at or below it reaches nominal × (G+1)/G over G units (the weighted
// form of the ⌈(n+1)·nominal⌉-th smallest): a new unit's error falls below it with
// probability ≥ nominal. With fewer than MinCalibrationErrors errors, or too few
// units for that share to be reached (fewer than 5 at 80%), the interval is the
// largest error × UncalibratedWidening, marked not calibrated.
func Conformal(kind ChangeKind, errs []HeldOutError, nominal float64) Calibration {
	per := map[string]int{} // errors per exchangeable unit
	deployments, campaigns := map[string]bool{}, map[string]bool{}
	for _, e := range errs {
		per[e.unit()]++
		deployments[e.Deployment] = true
		if e.Campaign != "" {
			campaigns[e.Campaign] = true
		}
	}
	c := Calibration{Kind: kind, Nominal: nominal, Errors: len(errs), Deployments: len(deployments), Campaigns: len(campaigns)}
	if len(errs) == 0 {
		c.LogHalfWidth = fallbackLogHalfWidth
		return c
	}
	s := append([]HeldOutError(nil), errs...)
	sort.Slice(s, func(i, j int) bool { return s[i].AbsLog < s[j].AbsLog })
	g := float64(len(per))
	need := nominal * (g + 1) / g
	if len(s) < MinCalibrationErrors || need >= 1-1e-12 { // the largest error itself would be the quantile
		c.LogHalfWidth = math.Max(s[len(s)-1].AbsLog*UncalibratedWidening, 0.1)
		return c
	}
	cum := 0.0
	for _, e := range s {
		cum += 1 / (g * float64(per[e.unit()]))
		if cum >= need-1e-12 {
			c.LogHalfWidth, c.Calibrated = e.AbsLog, true
			return c
		}
	}
	c.LogHalfWidth, c.Calibrated = s[len(s)-1].AbsLog, true
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

// VendorEfficiency is the factor on the share of the roofline when a prediction
// carries a measurement from a GPU of vendor from to one of vendor to ("amd",
// "nvidia"): the share reached differs by vendor (kernels, attention backends and
// engines of ROCm and CUDA), fitted on the public errors that cross vendors and
// validated leave-one-deployment-out (docs/validation.md). 1 for the same vendor or
// one without data.
func VendorEfficiency(from, to string) float64 {
	off := vendorOffsetTable()
	return math.Exp(off[to] - off[from])
}
