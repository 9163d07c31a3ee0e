package compare

// Schema is the value of Result.Schema; it changes only when a field changes meaning.
const Schema = "ceiling.compare/v1"

// Verdicts of one metric's test.
const (
	Better        = "better"
	Worse         = "worse"
	NoDifference  = "no significant difference"
	NotTested     = "not tested"
	methodBoot    = "bootstrap"
	methodRepeats = "repeats"
	methodExact   = "exact"
	methodCeiling = "ceiling resamples"
)

// Result is the comparison of a candidate with a baseline: what `ceiling compare
// --format json` prints (docs/compare.md documents every field).
type Result struct {
	Schema    string   `json:"schema"`
	Baseline  SideInfo `json:"baseline"`
	Candidate SideInfo `json:"candidate"`
	// Method is how the variance was estimated: "bootstrap" (one run each side:
	// the analysis' resamples of each level) or "repeats" (several runs on a
	// side: the spread between them).
	Method string `json:"method"`
	// Threshold is the practical threshold: a regression is a worsening beyond it.
	Threshold float64 `json:"threshold"`
	// Alpha is the family-wise false-alarm rate the gated tests are held to.
	Alpha float64 `json:"alpha"`
	// Correction names the multiplicity correction over the gated tests ("holm").
	Correction string `json:"correction"`
	// Gated are the metrics that can fail the comparison; the others are shown,
	// tested each at Alpha without correction, and never fail it.
	Gated []string `json:"gated"`
	// Differences name what differs between the sides and is allowed: the
	// server's version, the GPU, the flags (what a comparison is usually about).
	Differences []string `json:"differences"`
	// Ceiling compares the realistic ceilings; null when neither side found one
	// or neither has resamples of it.
	Ceiling *CeilingDiff `json:"ceiling"`
	// Levels are the matched levels, in order of offered load.
	Levels []LevelDiff `json:"levels"`
	// Unmatched names the levels one side has and the other lacks.
	Unmatched []string `json:"unmatched,omitempty"`
	// Regression is true when a gated metric regressed (exit code 1); Regressions
	// name each one.
	Regression  bool      `json:"regression"`
	Regressions []Finding `json:"regressions"`
	// Improvements are the gated metrics significantly better.
	Improvements []Finding `json:"improvements"`
	// Inconclusive are the gated tests that could neither find a difference nor
	// rule out one beyond the threshold; Needed says what would settle them.
	Inconclusive []Finding `json:"inconclusive"`
	Needed       *Needed   `json:"needed"`
	// Verdict is the one-line answer: "regression: ...", "no regression: ...".
	Verdict string `json:"verdict"`
}

// SideInfo describes one side of the comparison.
type SideInfo struct {
	Sources []string `json:"sources"`
	Runs    int      `json:"runs"`
	Model   string   `json:"model"`
	Server  string   `json:"server"` // kind and version, "" when unknown
	GPU     string   `json:"gpu"`    // the declared GPU, "" when none was declared
}

// LevelDiff is one matched level: its metrics' differences.
type LevelDiff struct {
	// Label is "c=8" in closed loop, "rate=4/s" in open loop.
	Label       string       `json:"label"`
	Concurrency int          `json:"concurrency"`
	Rate        float64      `json:"rate"`
	Metrics     []MetricDiff `json:"metrics"`
}

// MetricDiff is one metric's difference at one level (or at the ceiling).
type MetricDiff struct {
	// Metric is the analysis field: output_tok_s, request_s, goodput_request_s,
	// ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s, e2e_p50_s, e2e_p99_s, error_rate.
	Metric    string   `json:"metric"`
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	// Change is candidate ÷ baseline − 1; for error_rate the difference of the
	// rates (0.02 = two percentage points). Low and High are its 95% interval.
	Change *float64 `json:"change"`
	Low    *float64 `json:"low"`
	High   *float64 `json:"high"`
	// P is the test's two-sided p-value; PAdjusted the Holm-adjusted one (gated
	// metrics only). Null when not tested.
	P         *float64 `json:"p"`
	PAdjusted *float64 `json:"p_adjusted"`
	Gated     bool     `json:"gated"`
	// Method is "bootstrap", "repeats", "exact" (Fisher's exact test of the error
	// counts) or "ceiling resamples".
	Method string `json:"method,omitempty"`
	// Verdict is better, worse, no significant difference or not tested (Note says why).
	Verdict    string `json:"verdict"`
	Regression bool   `json:"regression"`
	Note       string `json:"note,omitempty"`

	higherBetter bool
	// se is the standard error of the log ratio (or of the rate difference),
	// units the repeats on each side, n the requests on each side: what the
	// "needed" figures scale.
	se    float64
	units [2]int
	n     [2]int
}

// CeilingDiff compares the realistic ceilings. A null concurrency is "no ceiling
// found in the tested range".
type CeilingDiff struct {
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	// BaselineText and CandidateText say how stable each is ("24 in 92% of
	// resamples, else 32 (8%)").
	BaselineText  string     `json:"baseline_text"`
	CandidateText string     `json:"candidate_text"`
	Diff          MetricDiff `json:"diff"`
}

// Finding names one gated test: the metric, where, and the change in words.
type Finding struct {
	Metric string `json:"metric"`
	Where  string `json:"where"` // "c=8" or "ceiling"
	Text   string `json:"text"`
}

// Needed is what would settle the inconclusive tests: how many times more data,
// as requests per level (one run each side) or repeats per side.
type Needed struct {
	Factor           float64 `json:"factor"`
	RequestsPerLevel int     `json:"requests_per_level,omitempty"`
	RepeatsPerSide   int     `json:"repeats_per_side,omitempty"`
	Text             string  `json:"text"`
}
