package analyze

// The JSON of what the analysis judges and decides of a run: the criteria, the KV
// check and the server's binding limit, the ceiling search, the decision in
// deployment terms with its energy, and the comparisons beside measured runs
// (matched speeds, other tools' summaries). Each field's doc comment is its
// reference (docs/analysis-json.md is generated from them).

// Criteria says what a run was judged by and where that came from.
type Criteria struct {
	// Knee is the gain per doubling below which the throughput curve counts as
	// flat; null: the knee is off.
	Knee *float64 `json:"knee"`
	// MaxErrors is the share of failed requests above which a level is past the
	// ceiling; null: the errors criterion is off.
	MaxErrors *float64 `json:"max_errors"`
	// From is "options" (some given to the analysis; the rest may be the
	// recording's), "recording" (stored by the recording's search) or "defaults".
	From string `json:"from"`
	// Text says it in words.
	Text string `json:"text"`
}

// KVCheck puts the modelled, declared and observed KV capacity side by side.
type KVCheck struct {
	ModelledTokens *int64 `json:"modelled_tokens"`
	DeclaredTokens *int64 `json:"declared_tokens"`
	ObservedTokens *int64 `json:"observed_tokens"`
	// ObservedFromLevel is the level the observed tokens were estimated at.
	ObservedFromLevel *int `json:"observed_from_level"`
	// FullAtLevel is the first level where the server's KV cache was full or
	// pressed (see policy_kvcheck.go), null when it never was.
	FullAtLevel *int    `json:"full_at_level"`
	Tolerance   float64 `json:"tolerance"`
	// Agree is null when fewer than two figures are known.
	Agree   *bool  `json:"agree"`
	Verdict string `json:"verdict"`
}

// ServerBinding is the limit the server's own counters show, with the evidence.
type ServerBinding struct {
	Limit    string   `json:"limit"` // "kv" or "batch"
	Level    int      `json:"level"`
	Evidence []string `json:"evidence"`
}

// SearchPath is a run's ceiling search; nil for a run with a fixed list of levels.
type SearchPath struct {
	// Answer is "ceiling N concurrent requests (bracket N..M), bound by
	// <criterion> at M: <evidence>", or says how far an unfinished search got.
	Answer     string       `json:"answer"`
	Done       bool         `json:"done"`
	Ceiling    float64      `json:"ceiling"`
	Lo         float64      `json:"lo"`
	Hi         float64      `json:"hi"`
	Bound      string       `json:"bound"`
	Evidence   string       `json:"evidence,omitempty"`
	Sustain    string       `json:"sustain,omitempty"`
	Criteria   []string     `json:"criteria"`
	Resolution string       `json:"resolution"`
	Unit       string       `json:"unit"` // "concurrent requests" or "requests/s"
	LevelS     float64      `json:"level_seconds"`
	Steps      []SearchStep `json:"steps"`
}

// SearchStep is one level of the search.
type SearchStep struct {
	Level    int      `json:"level"`
	X        float64  `json:"x"` // the concurrency, or the rate
	Phase    string   `json:"phase"`
	Verdict  string   `json:"verdict"`
	Failed   []string `json:"failed,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
}

// Decision is the analysis JSON's "decision" object of a run.
type Decision struct {
	Shape    string `json:"shape"` // e.g. "TP 8", "DP 2 × TP 4 + EP"
	GPU      string `json:"gpu"`   // "" when not given
	GPUs     int    `json:"gpus"`
	TP       int    `json:"tp"`
	DP       int    `json:"dp"`
	PP       int    `json:"pp"`
	EP       bool   `json:"ep"`
	Replicas int    `json:"replicas"` // serving engines
	// Roofline states what the roofline assumes; null without a catalog GPU and config.
	Roofline    *RooflineInfo   `json:"roofline"`
	GPUHourCost *float64        `json:"gpu_hour_cost_usd"`
	Levels      []LevelDecision `json:"levels"`
	AtCeiling   *AtCeiling      `json:"at_ceiling"`
	Sizing      *Sizing         `json:"sizing"`
	// WhatIf holds predictions from this sweep (ceiling whatif); empty otherwise.
	WhatIf []WhatIfRow `json:"what_if,omitempty"`
	Notes  []string    `json:"notes"`
}

// RooflineInfo is the hardware and assumptions the roofline uses.
type RooflineInfo struct {
	HBMBytesS         float64 `json:"hbm_bytes_s"`
	PeakFLOPs         float64 `json:"peak_flops"`
	ComputeDtype      string  `json:"compute_dtype"`
	LinkBytesS        float64 `json:"link_bytes_s"` // per direction
	AllReduceLatencyS float64 `json:"allreduce_latency_s"`
	WeightBytesPerGPU float64 `json:"weight_bytes_per_gpu"`
	ActiveParams      float64 `json:"active_params"`
}

// LevelDecision is one level in decision terms.
type LevelDecision struct {
	Level            int     `json:"level"`
	Concurrency      int     `json:"concurrency"`
	OutputTokSPerGPU float64 `json:"output_tok_s_per_gpu"`
	PerUserTokS      float64 `json:"per_user_tok_s"`
	// Cost per million output tokens and per million prompt+output tokens, in USD;
	// null without GPUHourCost or throughput.
	CostPerMOutput *float64 `json:"cost_per_m_output_tokens_usd"`
	CostPerMTotal  *float64 `json:"cost_per_m_total_tokens_usd"`
	// Roofline is the level against its roofline; null without one.
	Roofline *LevelRoofline `json:"roofline"`
	// Energy is the level's GPU power and energy per token; null without GPU
	// telemetry (policy_energycost.go).
	Energy *LevelEnergy `json:"energy"`
}

// LevelRoofline is the roofline at the batch a level ran (its measured decode
// concurrency) and the level's share of it.
type LevelRoofline struct {
	Batch         float64 `json:"batch"`
	ContextTokens float64 `json:"context_tokens"`
	TotalTokS     float64 `json:"total_tok_s"`
	PerUserTokS   float64 `json:"per_user_tok_s"`
	Bound         string  `json:"bound"` // memory, compute, communication
	// PctTotal and PctPerUser are the measured output tok/s and per-user tok/s as
	// percentages of the roofline's.
	PctTotal   float64 `json:"pct_total"`
	PctPerUser float64 `json:"pct_per_user"`
	Regime     string  `json:"regime"`
}

// AtCeiling is the level serving at the realistic ceiling, in cost terms.
type AtCeiling struct {
	Level       int     `json:"level"`
	Concurrency float64 `json:"concurrency"`
	// GoodputShare is goodput ÷ request rate there (1 without SLOs).
	GoodputShare float64 `json:"goodput_share"`
	// OutputTokS is the output tok/s within the SLOs: measured × GoodputShare.
	OutputTokS     float64  `json:"output_tok_s"`
	RequestS       float64  `json:"request_s"` // within the SLOs
	PctRoofline    *float64 `json:"pct_roofline"`
	CostPerMOutput *float64 `json:"cost_per_m_output_tokens_usd"`
	CostPerMTotal  *float64 `json:"cost_per_m_total_tokens_usd"`
	// Energy is the ceiling level's GPU power and energy per token; null without GPU
	// telemetry.
	Energy *LevelEnergy `json:"energy"`
}

// Sizing is the replicas of the measured deployment a target load needs.
type Sizing struct {
	TargetRPS   float64  `json:"target_rps"`
	TargetUsers *float64 `json:"target_users"`
	ThinkTimeS  float64  `json:"think_time_s"`
	Headroom    float64  `json:"headroom"`
	// PerDeploymentRPS is what one copy of the measured deployment serves within the
	// SLOs at the ceiling.
	PerDeploymentRPS float64 `json:"per_deployment_rps"`
	Deployments      int     `json:"deployments"`
	GPUs             int     `json:"gpus"`
	// Utilization is the target load ÷ the capacity of that many deployments.
	Utilization float64 `json:"utilization"`
}

// LevelEnergy is one level's power and energy in decision terms.
type LevelEnergy struct {
	PowerPerGPUW    *float64 `json:"power_per_gpu_w"`
	JPerOutputToken *float64 `json:"j_per_output_token"`
	JPerRequest     *float64 `json:"j_per_request"`
	// EnergyCostPerMOutput is the electricity (× PUE) of a million output tokens in
	// USD; null without a power cost.
	EnergyCostPerMOutput *float64 `json:"energy_cost_per_m_output_tokens_usd"`
	// EnergyShare is the energy cost ÷ (GPU-hour cost + energy cost) per million
	// output tokens; null unless both prices are given.
	EnergyShare *float64 `json:"energy_share"`
	PUE         float64  `json:"pue"`
}

// MatchedSpeed is the comparison of several curves at the same per-user speeds.
type MatchedSpeed struct {
	Method      string         `json:"method"`
	Speeds      []float64      `json:"per_user_tok_s"`
	GPUHourCost *float64       `json:"gpu_hour_cost_usd"`
	Curves      []MatchedCurve `json:"curves"`
}

// MatchedCurve is one run (or prediction) at each of MatchedSpeed.Speeds.
type MatchedCurve struct {
	Name      string `json:"name"`
	Predicted bool   `json:"predicted"`
	// OutputTokSPerGPU and CostPerMOutput are per speed, null where the curve does
	// not reach that speed (or no GPU-hour cost was given).
	OutputTokSPerGPU []*float64 `json:"output_tok_s_per_gpu"`
	CostPerMOutput   []*float64 `json:"cost_per_m_output_tokens_usd"`
}

// SummaryCheck is one file of summary-level points beside one measured run.
type SummaryCheck struct {
	// SummaryLevel is always true: the other tool's figures are summaries.
	SummaryLevel bool   `json:"summary_level"`
	Tool         string `json:"tool"`
	Version      string `json:"version"`
	Source       string `json:"source"`
	MeasuredRun  string `json:"measured_run"`
	// MeasuredGPUs is the GPU count the measured per-GPU figures divide by, and
	// GPUsBasis where it came from.
	MeasuredGPUs int                 `json:"measured_gpus"`
	GPUsBasis    string              `json:"gpus_basis"`
	Points       []SummaryPointCheck `json:"points"`
	Notes        []string            `json:"notes"`
}

// SummaryPointCheck is one summary-level point and the measured level at its
// coordinate; DiffPct is (theirs − measured) ÷ measured, in percent.
type SummaryPointCheck struct {
	Label       string  `json:"label"`
	Concurrency float64 `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Theirs      Figures `json:"theirs"`
	Measured    Figures `json:"measured"`
	// MeasuredLevel is the level compared; null when the run has none at the point's
	// coordinate.
	MeasuredLevel *int    `json:"measured_level"`
	DiffPct       Figures `json:"diff_pct"`
}

// PrefixSharing is how the KV ceiling counts the prompts' shared prefixes.
type PrefixSharing struct {
	// Source of the shared length: "workload" (the run's own --shared-prefix-tokens
	// and --prefixes), "server" (the cached_tokens the server reported, one shared
	// prefix assumed) or "asked" (plan and whatif's --prefix-tokens).
	Source string `json:"source"`
	// SharedTokens is the shared prefix per request as the source gives it;
	// CountedTokens what the engine shares of it, in its full blocks of
	// BlockTokens; Prefixes the distinct shared prefixes, each held once per cache.
	SharedTokens  float64 `json:"shared_tokens"`
	CountedTokens float64 `json:"counted_tokens"`
	BlockTokens   int     `json:"block_tokens"`
	Prefixes      int     `json:"prefixes"`
	// Credited is true when the ceiling counts the shared prefixes once;
	// ConcurrencyWithoutSharing is the figure at the whole request length.
	Credited                  bool     `json:"credited"`
	ConcurrencyWithoutSharing *float64 `json:"concurrency_without_sharing,omitempty"`
	// Text says it in words, for the KV ceiling's evidence.
	Text string `json:"text"`

	how string // the engine's mechanism in prose
}

// PrefixHitCheck is one level's achieved prefix-cache hit rate against the target.
type PrefixHitCheck struct {
	Target float64 `json:"target"`
	// Achieved is the share of prompt tokens served from the cache, from Source:
	// "server counters" (vLLM prefix_cache_hits / prefix_cache_queries), "usage
	// cached_tokens" (the answers' usage), "server gauge" (SGLang
	// cache_hit_rate); null when the server reported none.
	Achieved *float64 `json:"achieved"`
	Source   string   `json:"source,omitempty"`
	// Missed is true when Achieved strays from Target by more than Margin.
	Missed bool    `json:"missed"`
	Margin float64 `json:"margin"`
	// Prepared is how the recorder prepared the cache before the level (flushed
	// or why not, prefix groups primed).
	Prepared string `json:"prepared,omitempty"`
}

// SummaryPointsBasis says that a what-if's measured baseline is a file of summary
// points (published levels), not a recorded run.
type SummaryPointsBasis struct {
	Tool   string   `json:"tool"`
	Files  []string `json:"files"`
	Points int      `json:"points"`
	// Derived names the figures worked out from others (per-user speed from
	// TPOT, the decode batch from throughput ÷ per-user speed).
	Derived []string `json:"derived,omitempty"`
}

// PredictionCheck is one planner prediction beside one measured run.
type PredictionCheck struct {
	// Predicted is always true: these are a planner's figures, not measurements.
	Predicted    bool    `json:"predicted"`
	Tool         string  `json:"tool"`
	Planner      string  `json:"planner"`
	Source       string  `json:"source"`
	Model        string  `json:"model"`
	GPU          string  `json:"gpu"`
	PromptTokens float64 `json:"prompt_tokens"`
	OutputTokens float64 `json:"output_tokens"`
	MeasuredRun  string  `json:"measured_run"`
	// MeasuredGPUs is the GPU count the measured per-GPU figures divide by, and
	// GPUsBasis where it came from ("--gpus", "the planner's").
	MeasuredGPUs int          `json:"measured_gpus"`
	GPUsBasis    string       `json:"gpus_basis"`
	Points       []PointCheck `json:"points"`
	// Flags are the points the measured deployment could not serve as predicted.
	Flags []string `json:"flags"`
	Notes []string `json:"notes"`
	// Mismatch names the planner's model or GPU beside the run's where they
	// differ: the figures are then compared only with this warning ("" = the same
	// deployment, or one side does not say).
	Mismatch string `json:"mismatch,omitempty"`
	// MedianAbsErrPct is the median absolute error of the predicted output tok/s
	// per GPU over the points measured; null when none was.
	MedianAbsErrPct *float64 `json:"median_abs_err_pct"`
}

// PointCheck is one predicted point, the measured figures at its concurrency and
// the prediction's error: (predicted − measured) ÷ measured, in percent.
type PointCheck struct {
	Label       string  `json:"label"`
	Concurrency float64 `json:"concurrency"`
	Config      string  `json:"config"`
	Predicted   Figures `json:"predicted"`
	Measured    Figures `json:"measured"`
	// MeasuredAt says where the measured figures come from: a level, an
	// interpolation between two, or why there are none.
	MeasuredAt string  `json:"measured_at"`
	ErrPct     Figures `json:"err_pct"`
	// KVHolds is how many requests of the prediction's length the measured
	// deployment's KV cache holds (null when unknown); BeyondKV and
	// BeyondCeiling flag a predicted concurrency above it or above the measured
	// realistic ceiling.
	KVHolds       *float64 `json:"kv_holds"`
	BeyondKV      bool     `json:"beyond_kv"`
	BeyondCeiling bool     `json:"beyond_ceiling"`
}

// Figures are the compared quantities of one point (null where unknown): output
// tokens per second per GPU, per-user tokens per second, median TTFT and TPOT in
// seconds.
type Figures struct {
	OutputTokSPerGPU *float64 `json:"output_tok_s_per_gpu"`
	PerUserTokS      *float64 `json:"per_user_tok_s"`
	TTFT             *float64 `json:"ttft_s"`
	TPOT             *float64 `json:"tpot_s"`
}
