package analyze

import (
	"encoding/json"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/trace"
)

// Schema is the value of Analysis.Schema; it changes only when a field changes meaning.
const Schema = "ceiling.analysis/v1"

// Analysis is the result of analyzing one or more runs, and the only contract between
// analyze and report. Its JSON form (`ceiling analyze --format json`) is a public
// interface: times in seconds, rates per second, sizes in bytes, null where unknown.
type Analysis struct {
	Schema string `json:"schema"`
	Runs   []Run  `json:"runs"`
	// Predictions are planners' predictions set beside the measured runs
	// (policy_predicted.go): never measurements, always marked predicted.
	Predictions []PredictionCheck `json:"predictions,omitempty"`
	// SummaryChecks are summary-level points (an llm-d benchmark report,
	// InferenceX results, a CSV of published levels) set beside the measured runs
	// (policy_summarycheck.go).
	SummaryChecks []SummaryCheck `json:"summary_checks,omitempty"`
	// MatchedSpeed compares the runs (and predictions) at the same per-user
	// speeds (policy_matchedspeed.go); absent with fewer than two curves.
	MatchedSpeed *MatchedSpeed `json:"matched_speed,omitempty"`
}

// Run is the analysis of one recorded run.
type Run struct {
	RunID  string `json:"run_id"`
	Source string `json:"source"` // the file or parts directory it came from
	Model  string `json:"model"`
	// Server is what the server revealed about itself (the trace's ceiling.run
	// "server" object, passed through unchanged).
	Server json.RawMessage `json:"server"`
	// Info is the whole ceiling.run metadata object (tool version, dates, target,
	// plan, client, declared hardware), passed through for the report's metadata table.
	Info   json.RawMessage `json:"info,omitempty"`
	Levels []Level         `json:"levels"`
	// Search is the ceiling search the recorder ran (record --concurrency auto):
	// its path and answer (policy_search.go); absent for a fixed list of levels.
	Search   *SearchPath `json:"search,omitempty"`
	Capacity *Capacity   `json:"capacity"`
	Fit      Fit         `json:"fit"`
	Ceilings Ceilings    `json:"ceilings"`
	Ceiling  Ceiling     `json:"ceiling"`
	SLO      SLO         `json:"slo"`
	// Criteria says what the run was judged by (knee, SLOs) and whether they are
	// the recording's own (policy_criteria.go).
	Criteria *Criteria `json:"criteria,omitempty"`
	Warnings []string  `json:"warnings"`
	// Decision is the run in deployment-decision terms: shape, roofline, cost, sizing.
	Decision *Decision `json:"decision"`
	// KVCheck compares the modelled, declared and observed KV capacity (policy_kvcheck.go);
	// null when none is known.
	KVCheck *KVCheck `json:"kv_check"`
	// ServerBinding is the limit the server's own counters show, null when they
	// show none (or there is no metrics sidecar).
	ServerBinding *ServerBinding `json:"server_binding"`
	// KVTier names the KV tier that binds, GPU or host, where the server reports a
	// host tier (stats_tiers.go); absent otherwise.
	KVTier *KVTierBinding `json:"kv_tier,omitempty"`
	// Bootstrap describes the resampling behind the levels' CIs and the stability
	// of the ceiling (stats_bootstrap.go); null for imported runs and with it off.
	Bootstrap *Bootstrap `json:"bootstrap"`
	// Repeats is the spread between the repeats of each sweep point (record
	// --repeat), absent without repeats; RepeatCeiling is the realistic ceiling of
	// each repeat alone against the pooled one (Stable: every repeat agrees).
	Repeats       []RepeatSpread    `json:"repeats,omitempty"`
	RepeatCeiling *CeilingStability `json:"repeat_ceiling,omitempty"`
	// Timeline is a sample of one level's requests for the report's per-request chart.
	Timeline *Timeline `json:"timeline,omitempty"`
	// Metrics are server metric series from the sidecar, thinned for plotting.
	Metrics []MetricSeries `json:"metrics,omitempty"`
	// SourceComparison compares an imported run's source tool's own summary
	// numbers with this analysis of its rows (imported runs only; set by the
	// importer's caller, see importanalysis.CompareAnalysis).
	SourceComparison *trace.SourceComparison `json:"source_comparison,omitempty"`
}

// Level holds the statistics of one sweep step. Latency statistics cover every
// successful non-warm-up request; throughput figures use the steady-state window.
type Level struct {
	Level int `json:"level"`
	// Repeat is which recording of its sweep point the level is (record --repeat).
	Repeat      int     `json:"repeat,omitempty"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Requests    int     `json:"requests"` // non-warm-up attempts
	Errors      int     `json:"errors"`
	// ErrorKinds counts failed attempts by kind ("http_429", "timeout", "reset", ...).
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`
	// ErrorGroups are the failures by kind and message, the server's own words
	// (stats_errors.go); absent when nothing failed.
	ErrorGroups []ErrorGroup `json:"error_groups,omitempty"`
	WindowS     float64      `json:"window_s"`
	// WindowStartS and WindowEndS are offsets from the level's first send.
	WindowStartS      float64  `json:"window_start_s"`
	WindowEndS        float64  `json:"window_end_s"`
	OutputTokS        float64  `json:"output_tok_s"`
	NaiveOutputTokS   float64  `json:"naive_output_tok_s"`
	RequestS          float64  `json:"request_s"`
	NaiveRequestS     float64  `json:"naive_request_s"`
	GoodputRequestS   *float64 `json:"goodput_request_s"` // null without SLOs
	DecodeConcurrency float64  `json:"decode_concurrency"`
	// WaitingConcurrency is the queue+prefill concurrency: requests between send and
	// first token (queued, or being prefilled), by Little's law over the window. It
	// is not pure queueing: at concurrency 1 it is the prefill share of each request.
	WaitingConcurrency float64 `json:"waiting_concurrency"`
	// PerUserTokS is the median over requests of output_tokens / (E2E - TTFT):
	// what one user sees while the server serves this many.
	PerUserTokS float64 `json:"per_user_tok_s"`
	// LevelOutputTokens is the sum over every successful non-warm-up request of the
	// level, window or not; NaiveOutputTokS divides it by the level's span.
	LevelOutputTokens int64 `json:"level_output_tokens"`
	// WindowOutputTokens counts only the tokens that arrived inside the steady-state
	// window (a request straddling an edge counts in proportion to its chunks, so it
	// is fractional): OutputTokS = WindowOutputTokens / WindowS.
	WindowOutputTokens float64 `json:"window_output_tokens"`
	// OutputTokens is LevelOutputTokens under its first name, kept for consumers
	// that read it; new code should say which count it means and use
	// LevelOutputTokens or WindowOutputTokens.
	OutputTokens     int64   `json:"output_tokens"`
	MeanPromptTokens float64 `json:"mean_prompt_tokens"`
	MeanOutputTokens float64 `json:"mean_output_tokens"`
	TTFT             Summary `json:"ttft_s"`
	TTFC             Summary `json:"ttfc_s"`
	TPOT             Summary `json:"tpot_s"`
	ITL              Summary `json:"itl_s"`
	E2E              Summary `json:"e2e_s"`
	// TTFTFromScheduled and E2EFromScheduled are, in open loop, the latencies
	// measured from each request's scheduled send (scheduled_ns) rather than its
	// actual send: corrected for coordinated omission, so a client that fell
	// behind its arrival schedule does not hide the server's queue. Null in
	// closed loop, where a request is sent when it is scheduled.
	TTFTFromScheduled *Summary `json:"ttft_from_scheduled_s,omitempty"`
	E2EFromScheduled  *Summary `json:"e2e_from_scheduled_s,omitempty"`
	// ITLHistogram is the pooled ITL distribution, for the report.
	ITLHistogram *Histogram `json:"itl_histogram,omitempty"`
	// Workload is the level's request lengths, asked and recorded, and its
	// prefix-cache hits (stats_workload.go).
	Workload *Workload `json:"workload,omitempty"`

	// InFlight is the time-averaged number of requests in flight inside the window
	// (decode + waiting concurrency); WindowCompletions the requests that completed in it.
	InFlight          float64 `json:"in_flight"`
	WindowCompletions int     `json:"window_completions"`
	// Valid is false when the level did not run at what it is labelled with, or its
	// window is too short or holds too few completions (see policy_validity.go); such a level
	// is shown but excluded from the ceilings and fits, and InvalidReason says why.
	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason,omitempty"`
	// StopReason is why the recorder ended the level early, as it stored it (its
	// --max-level-duration, an interrupt, failures, the server gone); empty when
	// the level ran to its size, or for another tool's file.
	StopReason string `json:"stop_reason,omitempty"`
	// Server is what the server's own /metrics said inside the window (see
	// stats_servercounters.go); null without a metrics sidecar or a scrape in the window.
	Server *ServerCounters `json:"server"`
	// PrefixHit is the level's achieved prefix-cache hit rate against the run's
	// target (record --prefix-hit-rate; policy_prefixhit.go); absent without one.
	PrefixHit *PrefixHitCheck `json:"prefix_hit,omitempty"`
	// GPU is the GPUs' power and energy inside the window (see policy_energy.go); null
	// without GPU telemetry (record --gpu-metrics-url).
	GPU *GPUTelemetry `json:"gpu"`
	// CI holds the level's bootstrap confidence intervals (stats_bootstrap.go); null for
	// imported runs and with the bootstrap off.
	CI *LevelCI `json:"ci"`
	// pooled is how many repeats a pooled point holds (poolRepeats; 0 or 1: one
	// level), pooledRelSE the relative standard error of their mean throughput.
	pooled      int
	pooledRelSE float64

	// winStartNs and winEndNs are the window in the trace's clock, for the sidecar.
	winStartNs, winEndNs int64
	// resamples are the bootstrap resamples behind CI, for Resamples (compare).
	resamples *levelResamples
}

// Summary summarizes one latency over requests (or pooled gaps, for ITL), in seconds.
// Percentiles interpolate linearly between order statistics (numpy's default), so any
// engine given the same rows gets the same numbers. Fields are null when N is 0.
type Summary struct {
	N    int      `json:"n"`
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
	// Tail holds p99.9 and the percentiles asked for (Options.Percentiles), each
	// null with a note when the level has too few values to tell it (stats_tail.go).
	Tail []TailPercentile `json:"tail,omitempty"`
}

// TailPercentile is one tail percentile of a latency. Value is null when fewer
// than Need values were measured: then Note says so ("p99.9 needs ≥ 1,000
// requests; this level has 240") and no number is given.
type TailPercentile struct {
	P     float64  `json:"p"`
	Value *float64 `json:"value"`
	N     int      `json:"n"`
	Need  int      `json:"need"`
	Note  string   `json:"note,omitempty"`
}

// Histogram has bucket edges in seconds (len(Counts)+1 edges).
type Histogram struct {
	Edges  []float64 `json:"edges"`
	Counts []int64   `json:"counts"`
}

// Capacity is the KV-cache and memory budget of the deployment: measured when the
// server revealed it, modelled from config.json and hardware otherwise, both when known.
type Capacity struct {
	KVBytesPerToken  *int64 `json:"kv_bytes_per_token"`
	KVCapacityTokens *int64 `json:"kv_capacity_tokens"`
	// Source says where KVCapacityTokens comes from, one meaning each everywhere:
	// "declared" (the server reported it: vLLM cache_config_info, SGLang
	// max_total_num_tokens, llama.cpp n_ctx with its cache layout known),
	// "modelled" (the capacity model, config.json and hardware), "observed" (the
	// server's behaviour under load: KV errors, usage). SourceDetail names the
	// figures and endpoints behind it.
	Source       string `json:"source"`
	SourceDetail string `json:"source_detail,omitempty"`
	// Layout is how the server lays its KV cache out: "shared" (one pool for every
	// running request: vLLM, SGLang, TGI, TensorRT-LLM), llama.cpp "unified" (the
	// slots share one cache of n_ctx tokens), "per_slot" (each slot holds its own
	// n_ctx tokens and one request: the slot count binds, never a pooled figure) or
	// "unknown" (llama.cpp does not say: KVCapacityMin/MaxTokens bound it and
	// KVCapacityTokens is null). LayoutEvidence says how the layout was told.
	Layout         string `json:"layout,omitempty"`
	LayoutEvidence string `json:"layout_evidence,omitempty"`
	// Slots and SlotContextTokens are llama.cpp's total_slots and per-slot n_ctx.
	Slots                    *int64   `json:"slots,omitempty"`
	SlotContextTokens        *int64   `json:"slot_context_tokens,omitempty"`
	KVCapacityMinTokens      *int64   `json:"kv_capacity_min_tokens,omitempty"`
	KVCapacityMaxTokens      *int64   `json:"kv_capacity_max_tokens,omitempty"`
	ModelledKVCapacityTokens *int64   `json:"modelled_kv_capacity_tokens"`
	DeclaredKVCapacityTokens *int64   `json:"declared_kv_capacity_tokens"`
	MaxModelLen              *int64   `json:"max_model_len"`
	ConcurrencyAtMaxModelLen *float64 `json:"concurrency_at_max_model_len"`
	ConcurrencyAtMeanRequest *float64 `json:"concurrency_at_mean_request"`
	ConcurrencyAtP99Request  *float64 `json:"concurrency_at_p99_request"`
	MeanRequestTokens        *float64 `json:"mean_request_tokens"`
	P99RequestTokens         *float64 `json:"p99_request_tokens"`
	Budget                   *Budget  `json:"budget"` // per GPU; null without a hardware model
	// KVBudgetRange is the budget under the flat and the modelled reserve, where
	// the reserve moves it by more than a tenth (null otherwise): the modelled
	// capacity then rests on an assumption, named in it.
	KVBudgetRange *capacity.ReserveRange `json:"kv_budget_range,omitempty"`
	// PrefixSharing is how the prompts' shared prefixes count in the KV ceiling
	// (policy_prefixdemand.go): when credited, ConcurrencyAtMeanRequest and
	// ConcurrencyAtP99Request hold each shared prefix once per cache. Absent when
	// the prompts share nothing.
	PrefixSharing *PrefixSharing `json:"prefix_sharing,omitempty"`
}

// Budget is the memory of one GPU, split the way the capacity model spends it: the
// capacity package's type, named here because it is part of the Analysis contract.
type Budget = capacity.Budget

// Fit holds the curve fits of throughput against concurrency.
type Fit struct {
	USL *USLFit `json:"usl"`
}

// USLFit is the Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1))
// (Gunther 2007; see stats_usl.go) fitted with σ, κ ≥ 0.
type USLFit struct {
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	Lambda float64 `json:"lambda"`
	// NMax is the concurrency of the fit's peak throughput, null when it has none
	// within reach (NoPeak says why).
	NMax *float64 `json:"n_max"`
	// NoPeak says why NMax is null: κ = 0 (throughput rises over the whole
	// range), σ ≥ 1, or a peak so far beyond the levels tested (over
	// peakReach × the highest) that the fit cannot place it.
	NoPeak string  `json:"no_peak,omitempty"`
	R2     float64 `json:"r2"`
}

// Ceilings are the concurrency limits found for a run, null where not found.
type Ceilings struct {
	KV    *float64 `json:"kv"`
	Batch *float64 `json:"batch"`
	Knee  *float64 `json:"knee"`
	// SLO is a whole number of requests in closed loop, the most a user can
	// configure and still meet the targets: the floor of the crossing interpolated
	// between the last level that met them and the first that missed (which the
	// evidence states), never below the last level that met them.
	SLO *float64 `json:"slo"`
	// Errors is the highest valid level below the first level (of every level,
	// invalid ones too) whose share of requests failed for another reason than a
	// full KV cache (the KV ceiling's evidence) is above the errors criterion
	// (Criteria): 0 where the lowest level already fails it; null where none does.
	Errors *float64 `json:"errors"`
}

// Ceiling is the realistic ceiling: the lowest of Ceilings, with the limit that binds
// ("kv", "batch", "errors", "slo", "knee") and the evidence in words. Concurrency is null when
// no ceiling was found in the tested range.
type Ceiling struct {
	Concurrency *float64 `json:"concurrency"`
	Binding     string   `json:"binding"`
	Evidence    []string `json:"evidence,omitempty"`
	// Prediction is a limit the valid levels did not reach (the KV figure beyond
	// the last valid level): shown as a prediction, never as the realistic ceiling.
	Prediction *Prediction `json:"prediction,omitempty"`
}

// Prediction is a ceiling that no valid level confirms: Limit names it ("kv"),
// Concurrency is its figure, ValidUpTo the last valid level's offered concurrency,
// Text the sentence the analysis and the report show.
type Prediction struct {
	Limit       string  `json:"limit"`
	Concurrency float64 `json:"concurrency"`
	ValidUpTo   float64 `json:"valid_up_to"`
	Text        string  `json:"text"`
}

// SLO holds the latency targets the analysis was run with, in seconds (null = none),
// each checked at its percentile (0: p99, as MLPerf Inference's server scenario).
type SLO struct {
	TTFT *float64 `json:"ttft"`
	TPOT *float64 `json:"tpot"`
	E2E  *float64 `json:"e2e"`
	// TTFTP, TPOTP and E2EP are the percentiles the targets hold at (95 = p95);
	// absent: p99.
	TTFTP float64 `json:"ttft_percentile,omitempty"`
	TPOTP float64 `json:"tpot_percentile,omitempty"`
	E2EP  float64 `json:"e2e_percentile,omitempty"`
}

// percentile is the percentile a target holds at.
func (s SLO) percentile(name string) float64 {
	p := map[string]float64{"TTFT": s.TTFTP, "TPOT": s.TPOTP, "E2E": s.E2EP}[name]
	if p <= 0 {
		return 99
	}
	return p
}

// none reports whether no target is set.
func (s SLO) none() bool { return s.TTFT == nil && s.TPOT == nil && s.E2E == nil }

// Timeline is a sample of the requests of one level, times in seconds from the
// level's first send. Thinned is true when not every request is shown.
type Timeline struct {
	Level    int               `json:"level"`
	Total    int               `json:"total"`
	Thinned  bool              `json:"thinned"`
	Requests []TimelineRequest `json:"requests"`
}

// TimelineRequest is one request on the timeline: waiting+prefill from Sent to
// FirstToken, decode from FirstToken to End.
type TimelineRequest struct {
	Worker     int      `json:"worker"`
	Sent       float64  `json:"sent"`
	FirstToken *float64 `json:"first_token"`
	End        float64  `json:"end"`
	Error      bool     `json:"error,omitempty"`
}

// MetricSeries is one server metric over time, seconds from the run's start.
type MetricSeries struct {
	Name   string       `json:"name"`
	Labels string       `json:"labels,omitempty"`
	Points [][2]float64 `json:"points"`
	// Levels aggregate the series inside each level's steady-state window, from
	// every scrape (before thinning): what a reviewer compares across levels.
	Levels []MetricLevel `json:"levels,omitempty"`
}

// MetricLevel is one metric inside one level's steady-state window: the mean and
// the maximum of the N scraped values (or per-scrape rates, for counters).
type MetricLevel struct {
	Level int     `json:"level"`
	N     int     `json:"n"`
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
}

// WhatIfSchema is the schema of `ceiling whatif --format json`.
const WhatIfSchema = "ceiling.whatif/v1"

// WhatIfDoc is the JSON document of `ceiling whatif`: one result per run, and the
// whole analysis only when asked for.
type WhatIfDoc struct {
	Schema   string          `json:"schema"`
	WhatIf   []*WhatIfResult `json:"what_if"`
	Analysis *Analysis       `json:"analysis,omitempty"`
}
