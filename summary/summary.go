// Package summary holds summary-level points: other tools' published summaries of
// one configuration at one load (an llm-d-benchmark report, InferenceX results),
// with no per-request data behind them. The importer reads them (importer.ReadSummary)
// and analyze sets them beside measured runs (analyze.CompareSummary); they are
// never turned into a trace.
package summary

// Stats are one latency's summary statistics in seconds; nil when absent.
type Stats struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
}

// Point is one configuration at one load, as the tool summarised it.
type Point struct {
	Label       string  `json:"label"`       // where it came from
	Concurrency float64 `json:"concurrency"` // 0 = not closed loop or unknown
	Rate        float64 `json:"rate"`        // requests/s offered; 0 = closed loop or unknown
	GPUs        int     `json:"gpus"`        // 0 = unknown
	GPU         string  `json:"gpu"`
	Model       string  `json:"model"`
	// OutputTokS is the output tokens per second of the whole configuration;
	// OutputTokSPerGPU the same per GPU (the tool's own division when it made one).
	OutputTokS       *float64 `json:"output_tok_s"`
	OutputTokSPerGPU *float64 `json:"output_tok_s_per_gpu"`
	RequestS         *float64 `json:"request_s"`
	PerUserTokS      *float64 `json:"per_user_tok_s"`
	TTFT             Stats    `json:"ttft"`
	TPOT             Stats    `json:"tpot"`
	E2E              Stats    `json:"e2e"`
	Requests         int      `json:"requests"`
	Failures         int      `json:"failures"`
	// InputTokens and OutputTokens are the mean request lengths of the point
	// (InferenceX's isl and osl, a CSV's input_tokens and output_tokens); nil when
	// the file does not say.
	InputTokens  *float64 `json:"input_tokens,omitempty"`
	OutputTokens *float64 `json:"output_tokens,omitempty"`
	// Precision and Framework are InferenceX's (fp8, fp4; vllm, sglang, trt).
	Precision string `json:"precision,omitempty"`
	Framework string `json:"framework,omitempty"`
}

// Summary is a file of summary-level points. SummaryLevel is always true: these are
// a tool's summaries, with no per-request data behind them in the file.
type Summary struct {
	SummaryLevel bool     `json:"summary_level"`
	Tool         string   `json:"tool"`
	Version      string   `json:"version"`
	Files        []string `json:"files"`
	Points       []Point  `json:"points"`
	Missing      []string `json:"missing"`
	// Warnings name the points left out for impossible values (the importer's
	// value checks), with the file, the point and the field.
	Warnings []string `json:"warnings,omitempty"`
}
