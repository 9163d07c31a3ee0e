package analyze

// The what-if JSON (ceiling whatif --format json): the changes asked, the rows
// and the predicted levels. The computing is policy_whatif*.go.

import (
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// WhatIfChange is one changed setting; zero fields keep the measured run's.
type WhatIfChange struct {
	PromptTokens, OutputTokens float64
	MaxModelLen                int64
	KVDtype                    string
	WeightDtype                string // the weights' precision (bf16, fp8, fp4, int4)
	GPU                        string
	GPUs, TP, DP, PP           int
	EP                         *bool
	// PrefixTokens is a prompt prefix the requests share, held once per KV cache
	// (engines with prefix caching); PrefixHitRate gives it as the share of the
	// prompt instead. Zero keeps the measured run's (policy_prefixdemand.go).
	PrefixTokens, PrefixHitRate float64
}

// WhatIfRow is one row of the what-if table: the measured run (Predicted false) or a
// prediction.
type WhatIfRow struct {
	Scenario         string   `json:"scenario"`
	Predicted        bool     `json:"predicted"`
	Shape            string   `json:"shape"`
	GPU              string   `json:"gpu"`
	RequestTokens    float64  `json:"request_tokens"`
	KVCapacityTokens int64    `json:"kv_capacity_tokens"` // all caches
	KVCeiling        float64  `json:"kv_ceiling"`
	AtMaxModelLen    *float64 `json:"per_cache_at_max_model_len"`
	MaxModelLen      int64    `json:"max_model_len"`
	// Ceiling is the realistic ceiling: measured, or predicted as the KV ceiling capped
	// by the measured batch limit and knee where they carry over.
	Ceiling    *float64 `json:"ceiling"`
	OutputTokS *float64 `json:"output_tok_s"` // at the ceiling
	// OutputTokSInterval is OutputTokS with its calibrated interval (predicted rows).
	OutputTokSInterval *Range `json:"output_tok_s_interval,omitempty"`
	Basis              string `json:"basis"` // how the prediction was made
	// OutputTokSAt is the concurrency OutputTokS is at; Extrapolation says how far
	// a predicted one lies past every valid measured level (policy_whatifprovenance.go).
	OutputTokSAt  *float64 `json:"output_tok_s_at_concurrency"`
	Extrapolation string   `json:"extrapolation,omitempty"`
}

// WhatIfResult is the what-if of one run: the ceiling rows (measured and predicted)
// and every measured level predicted under the change.
type WhatIfResult struct {
	// Predicted is always true: everything but the measured row and the measured
	// figures of each level is a prediction.
	Predicted bool        `json:"predicted"`
	RunID     string      `json:"run_id"`
	Change    string      `json:"change"` // the --to-* flags
	Rows      []WhatIfRow `json:"rows"`
	// Levels are the measured levels predicted under the change at the same
	// concurrency (policy_whatifcurve.go); empty without a roofline for both deployments.
	Levels         []LevelPrediction `json:"levels"`
	Model          string            `json:"model"`
	IntervalMethod string            `json:"interval_method"`
	// Interval is the calibration of the levels' intervals: the kind of change,
	// the nominal coverage and the held-out errors it came from.
	Interval prediction.Calibration `json:"interval"`
	Notes    []string               `json:"notes"`
	// SummaryPoints is set where the measured baseline is published summary points
	// (policy_whatifsummary.go), not a recorded run.
	SummaryPoints *SummaryPointsBasis `json:"built_from_summary_points,omitempty"`
}

// CurvePoint is one measured level as the whole-curve what-if reads it.
type CurvePoint struct {
	Level       int
	Concurrency float64
	// Batch is the measured decode concurrency (Little's law over the window).
	Batch       float64
	OutputTokS  float64
	PerUserTokS float64
	TTFT, TPOT  *float64 // medians, seconds
	Valid       bool
	// CILow and CIHigh are the 95% bootstrap interval of OutputTokS (nil: none).
	CILow, CIHigh *float64
}

// CurveModel is what the what-if predicts from: the measured curve with its
// deployment's roofline and the changed deployment's.
type CurveModel struct {
	Points                     []CurvePoint
	Base, Changed              *capacity.Roofline
	PromptTokens, OutputTokens float64 // measured (means)
	ToPrompt, ToOutput         float64 // under the change
	// KVHolds is how many requests the changed KV cache holds (≤ 0: unknown).
	KVHolds float64
	// Interval is the calibrated interval of the kind of change (zero: another
	// concurrency's, the narrowest).
	Interval prediction.Calibration
	// Efficiency multiplies the carried shares: the share another vendor's GPUs
	// reach of their roofline (prediction.VendorEfficiency; ≤ 0: 1).
	Efficiency float64
	// StepOverhead is the fixed time of a decode step taken off each measured
	// step before its share is carried and the changed deployment's added to the
	// predicted step (carryStep; prediction.StepOverhead; zero: none).
	StepOverhead prediction.Overhead
}

// Range is a prediction and its interval.
type Range struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// LevelPrediction is one measured level and its prediction under the change.
type LevelPrediction struct {
	Level       int     `json:"level"`
	Concurrency float64 `json:"concurrency"`
	Measured    struct {
		OutputTokS  float64  `json:"output_tok_s"`
		PerUserTokS float64  `json:"per_user_tok_s"`
		TTFT        *float64 `json:"ttft_p50_s"`
		TPOT        *float64 `json:"tpot_p50_s"`
		// Share is the measured output tok/s ÷ the roofline with prefill.
		Share float64 `json:"share_of_roofline"`
	} `json:"measured"`
	// Batch is the decode batch the prediction assumes.
	Batch float64 `json:"batch"`
	// The predicted figures, null where the model cannot say (Beyond says why).
	OutputTokS  *Range `json:"output_tok_s"`
	PerUserTokS *Range `json:"per_user_tok_s"`
	TTFT        *Range `json:"ttft_p50_s"`
	TPOT        *Range `json:"tpot_p50_s"`
	// AtMeasuredSpeed is the predicted output tok/s at this level's measured
	// per-user speed (interpolated along the predicted curve): the two
	// deployments compared at the service level a user gets. Null when the
	// predicted curve does not reach that speed.
	AtMeasuredSpeed *float64 `json:"output_tok_s_at_measured_speed"`
	Beyond          string   `json:"beyond_model,omitempty"`
	// Invalid is set where the measured level itself is invalid (Beyond says
	// why): labelled "invalid", not "beyond model", which is for levels past
	// what the changed KV cache holds.
	Invalid bool `json:"invalid,omitempty"`
	// TTFTBeyond says why TTFT is not predicted at a level whose others are: its
	// measured TTFT is mostly queueing, which the model does not carry over.
	TTFTBeyond string `json:"ttft_beyond_model,omitempty"`
}
