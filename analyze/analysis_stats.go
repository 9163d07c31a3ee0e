package analyze

// The JSON of the statistics of a run and its levels: intervals and the
// ceiling's stability, failures, repeats, resamples, GPU telemetry, the
// workload. Each field's doc comment is its reference (docs/analysis-json.md is
// generated from them).

import "github.com/ceiling-llm/ceiling/engine"

// Interval is a confidence interval.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// LevelCI holds a level's bootstrap confidence intervals (ciConfidence, percentile
// method). The latency intervals are null when the level has no such latency.
//
// Each interval is null where its level is too short for one: window figures with
// fewer than MinIntervalBlocks (5) blocks, p50s from fewer than MinIntervalRequests
// (20) requests, p99s from fewer than MinP99IntervalRequests (50). A window
// interval always contains the level's own figure (what was observed to complete
// is never outside it).
type LevelCI struct {
	OutputTokS *Interval `json:"output_tok_s"`
	RequestS   *Interval `json:"request_s"`
	TTFTP50    *Interval `json:"ttft_p50_s"`
	TTFTP99    *Interval `json:"ttft_p99_s"`
	TPOTP50    *Interval `json:"tpot_p50_s"`
	TPOTP99    *Interval `json:"tpot_p99_s"`
	// BlockS is the time block of the window bootstrap, Blocks how many fit in the
	// window: below MinIntervalBlocks (5) the throughput interval is too narrow to
	// trust.
	BlockS float64 `json:"block_s"`
	Blocks float64 `json:"blocks"`
}

// Bootstrap describes the resampling of a run and the stability of its ceiling.
type Bootstrap struct {
	Resamples  int     `json:"resamples"`
	Confidence float64 `json:"confidence"`
	Seed       uint64  `json:"seed"`
	// Ceiling is null when no level is valid.
	Ceiling *CeilingStability `json:"ceiling"`
}

// CeilingStability is how often resampled level figures give the reported ceiling.
type CeilingStability struct {
	// Share is the fraction of resamples whose realistic ceiling is the reported one
	// (none found counts as a value of its own).
	Share float64 `json:"share"`
	// Outcomes lists every ceiling the resamples gave, most frequent first; a null
	// concurrency is "no ceiling found in the tested range".
	Outcomes []CeilingOutcome `json:"outcomes"`
	// Low and High span the middle 95% of the ceilings found (null when none found).
	Low  *float64 `json:"low"`
	High *float64 `json:"high"`
	// Stable is Share ≥ 0.9; an unstable ceiling is reported as the Low–High range
	// with a warning.
	Stable bool `json:"stable"`
	// Text says it in words: "32 in 91% of resamples, else 24 (9%)".
	Text string `json:"text"`
}

// CeilingOutcome is one ceiling value and the share of resamples that gave it.
type CeilingOutcome struct {
	Concurrency *float64 `json:"concurrency"`
	Share       float64  `json:"share"`
}

// RangeText is the range the ceiling moves in, "24–48", or what is known of it.
func (st *CeilingStability) RangeText() string {
	if st.Low == nil {
		return "none found"
	}
	if *st.Low == *st.High {
		return concCell(st.Low)
	}
	return concCell(st.Low) + "–" + concCell(st.High)
}

// ErrorGroup is one kind of failure of a level with the server's (or the client's)
// message: Message is the first text seen, Count the failures whose text matches it
// once numbers are set aside ("request (312 tokens) exceeds ..." and "request (298
// tokens) exceeds ..." are one group).
type ErrorGroup struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// RepeatSpread is how far one point's repeats lie apart.
type RepeatSpread struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	// Levels are the point's level indices, every repeat; the spread below is over
	// the valid ones (an invalid level's figures measure nothing).
	Levels        []int   `json:"levels"`
	OutputTokSMin float64 `json:"output_tok_s_min"`
	OutputTokSMax float64 `json:"output_tok_s_max"`
	// TTFTP99Min and TTFTP99Max are null when no valid repeat has a TTFT.
	TTFTP99Min *float64 `json:"ttft_p99_min"`
	TTFTP99Max *float64 `json:"ttft_p99_max"`
}

// LevelResamples are the bootstrap resamples of one level's figures, the values
// its confidence intervals (LevelCI) are the percentiles of: one entry per
// resample, in the order drawn. Package compare tests the difference between two
// runs from them. A slice is nil where the level's interval is null (too short a
// window, too few requests: the rules of LevelCI), so that nothing is tested that
// the analysis would not give an interval for.
type LevelResamples struct {
	OutputTokS []float64
	RequestS   []float64
	TTFTP50    []float64
	TTFTP99    []float64
	TPOTP50    []float64
	TPOTP99    []float64
	E2EP50     []float64
	E2EP99     []float64
}

// GPUTelemetry is one level's GPU figures inside its steady-state window; a field is
// null when no exporter reported it.
type GPUTelemetry struct {
	GPUs    int `json:"gpus"`
	Scrapes int `json:"scrapes"` // scrapes of the busiest GPU inside the window
	// PowerPerGPUW is the mean over GPUs of each GPU's mean power; TotalPowerW their sum.
	PowerPerGPUW *float64 `json:"power_per_gpu_w"`
	TotalPowerW  *float64 `json:"total_power_w"`
	// EnergyJ is the energy of all GPUs over the window; EnergySource says whether it
	// came from the energy counters or from the mean power × the window.
	EnergyJ      *float64 `json:"energy_j"`
	EnergySource string   `json:"energy_source"`
	// JPerOutputToken and JPerRequest divide the energy rate by the level's output
	// tok/s and completed requests/s (both in the same window).
	JPerOutputToken *float64 `json:"j_per_output_token"`
	JPerRequest     *float64 `json:"j_per_request"`
	UtilPct         *float64 `json:"util_pct"`      // GPU (or graphics) utilisation, mean over GPUs
	SMActivePct     *float64 `json:"sm_active_pct"` // DCGM profiling SM activity
	MemUsedMiB      *float64 `json:"mem_used_mib"`  // framebuffer used, summed over GPUs
	SMClockMHz      *float64 `json:"sm_clock_mhz"`
	// CounterResets counts energy counters that went down inside the window.
	CounterResets int `json:"counter_resets,omitempty"`

	rateW float64 // EnergyJ ÷ the window: the GPUs' energy rate
}

// Workload is one level's request lengths and prefix-cache hits, over its successful
// non-warm-up requests.
type Workload struct {
	// Lengths in tokens as asked (target prompt, max_tokens) and as the server
	// counted them (prompt_tokens, output_tokens).
	TargetPrompt Summary `json:"target_prompt_tokens"`
	Prompt       Summary `json:"prompt_tokens"`
	MaxTokens    Summary `json:"max_tokens"`
	Output       Summary `json:"output_tokens"`
	// CachedRequests counts the requests that reported cached_tokens;
	// PrefixHitShare is their cached tokens over their prompt tokens (null when none
	// reported).
	CachedRequests int      `json:"cached_requests"`
	PrefixHitShare *float64 `json:"prefix_hit_share"`
	// Turns is per conversation turn (multi-turn runs only, in turn order).
	Turns []TurnStats `json:"turns,omitempty"`
}

// TurnStats is one turn of a level's conversations.
type TurnStats struct {
	Turn           int      `json:"turn"`
	Requests       int      `json:"requests"`
	PromptTokens   Summary  `json:"prompt_tokens"`
	PrefixHitShare *float64 `json:"prefix_hit_share"`
	TTFT           Summary  `json:"ttft_s"`
}

// ServerCounters are the server's own figures inside one level's window; a field is
// null when the server does not expose it. KV usage is a fraction (1 = full).
type ServerCounters struct {
	Engine          engine.Name `json:"engine"` // whose metric names they are: vllm, nim, sglang, llamacpp, tgi or trtllm
	Scrapes         int         `json:"scrapes"`
	RunningMean     *float64    `json:"running_mean"`
	RunningMax      *float64    `json:"running_max"`
	WaitingMean     *float64    `json:"waiting_mean"`
	WaitingMax      *float64    `json:"waiting_max"`
	KVUsageMean     *float64    `json:"kv_usage_mean"`
	KVUsageMax      *float64    `json:"kv_usage_max"`
	Preemptions     *float64    `json:"preemptions"`       // count in the window
	PreemptionsPerS *float64    `json:"preemptions_per_s"` // rate in the window
	PrefixHitRate   *float64    `json:"prefix_hit_rate"`
	GenerationTokS  *float64    `json:"generation_tok_s"`
	// Tiers is the share of prompt KV each tier served (GPU, host, recomputed)
	// and the host tier's fill and traffic (stats_tiers.go); absent when the
	// server reports none of them.
	Tiers *KVTiers `json:"kv_tiers,omitempty"`
}
