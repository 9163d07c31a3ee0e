package trace

import (
	"time"

	"github.com/ceiling-llm/ceiling/engine"
)

// SchemaVersion is the trace format version written to the file metadata key
// MetaSchemaVersion. Readers refuse versions newer than the one they know.
const SchemaVersion = "2"

// File key-value metadata keys of a trace.
const (
	MetaSchemaVersion = "ceiling.schema_version"
	MetaRun           = "ceiling.run"
	// MetaPart marks a part file (see Parts): which kind of part, which level.
	MetaPart = "ceiling.part"
	// MetaRunID is the run id alone, on every file (trace, sidecar, part), so that a
	// reader can tell a sidecar of another run from the run's own without parsing
	// MetaRun.
	MetaRunID = "ceiling.run_id"
	// MetaDigest is the checksum of the file's column values, row count and
	// metadata (see digest.go), verified on read.
	MetaDigest = "ceiling.digest"
)

// Row is one request attempt: one row of the trace (schema version 2, see
// docs/trace-schema.md).
// Times are Unix nanoseconds. Nullable columns are pointers.
type Row struct {
	RunID              string  `parquet:"run_id"`
	Level              int32   `parquet:"level"`
	Concurrency        int32   `parquet:"concurrency"`
	Rate               float64 `parquet:"rate"`
	RequestID          int64   `parquet:"request_id"`
	Worker             int32   `parquet:"worker"`
	Warmup             bool    `parquet:"warmup"`
	ScheduledNs        int64   `parquet:"scheduled_ns"`
	SentNs             int64   `parquet:"sent_ns"`
	FirstTokenNs       *int64  `parquet:"first_token_ns,optional"`
	FirstContentNs     *int64  `parquet:"first_content_ns,optional"`
	EndNs              int64   `parquet:"end_ns"`
	ChunkGapsUs        []int32 `parquet:"chunk_gaps_us,list"`
	PromptTokens       *int32  `parquet:"prompt_tokens,optional"`
	OutputTokens       *int32  `parquet:"output_tokens,optional"`
	ReasoningTokens    *int32  `parquet:"reasoning_tokens,optional"`
	CachedTokens       *int32  `parquet:"cached_tokens,optional"`
	TokensSource       string  `parquet:"tokens_source"`
	TargetPromptTokens int32   `parquet:"target_prompt_tokens"`
	MaxTokens          int32   `parquet:"max_tokens"`
	Status             int32   `parquet:"status"`
	FinishReason       *string `parquet:"finish_reason,optional"`
	Error              *string `parquet:"error,optional"`
	// Schema version 2: a multi-turn conversation's request carries the
	// conversation's id (the request_id of its first turn) and its turn (from 1);
	// null for single requests and in version 1 traces.
	ConversationID *int64 `parquet:"conversation_id,optional"`
	Turn           *int32 `parquet:"turn,optional"`
}

// MetricSample is one row of the metrics sidecar (RUN.metrics.parquet): one value of
// one Prometheus series at one scrape.
type MetricSample struct {
	TsNs   int64   `parquet:"ts_ns"`
	Name   string  `parquet:"name"`
	Labels string  `parquet:"labels"`
	Value  float64 `parquet:"value"`
}

// RunInfo is the JSON stored under MetaRun: everything about a run that is not a row.
// It is a public format (other tools write it too), so fields are only ever added.
type RunInfo struct {
	Tool     string      `json:"tool"`
	Version  string      `json:"version"`
	RunID    string      `json:"run_id"`
	Started  time.Time   `json:"started"`
	Ended    time.Time   `json:"ended,omitzero"`
	Target   Target      `json:"target"`
	Plan     Plan        `json:"plan"`
	Server   ServerInfo  `json:"server"`
	Client   ClientInfo  `json:"client"`
	Declared Declared    `json:"declared,omitzero"`
	Levels   []LevelInfo `json:"levels"`
	// StopReason says why the sweep ended (all levels done, auto-stop rule, interrupt).
	StopReason  string `json:"stop_reason,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
	// Workload says how synthetic prompt lengths were calibrated (or "dataset").
	Workload string `json:"workload,omitempty"`
	// OutputControl says how output lengths were enforced: "max_tokens", plus
	// "ignore_eos" and "min_tokens" where they were sent (the rows' output_tokens
	// against max_tokens show whether the server honoured them).
	OutputControl string `json:"output_control,omitempty"`
	// Warnings are what the recorder did not believe of the server's answers (a
	// usage count out of range, far above max_tokens), each naming the request.
	Warnings []string `json:"warnings,omitempty"`
	// Resumed lists when the recording was continued with --resume.
	Resumed []time.Time `json:"resumed,omitempty"`
	// Source says where an imported run came from (ceiling import); nil for a run
	// ceiling recorded.
	Source *SourceInfo `json:"source,omitempty"`
	// Config is the run's configuration as the user gave it, from a config file and
	// the command line: `ceiling record` flag names (without dashes) and their
	// values in the flags' syntax, so that `ceiling record --config-from TRACE`
	// re-runs the sweep. It never holds the API key, credentials in a URL or the
	// output file; absent in traces recorded before it was added.
	Config map[string]string `json:"config,omitempty"`
	// Search is the ceiling search's answer (--concurrency auto, --rate auto),
	// updated after every level; nil for a fixed list of levels.
	Search *SearchResult `json:"search,omitempty"`
	// Shard is set on the trace of one shard of a sharded sweep (ceiling record
	// --shard I/N) and on the run merged from the shards (ceiling merge); nil
	// for a run recorded by one client.
	Shard *ShardInfo `json:"shard,omitempty"`
	// ReplayPrefix is the shared-block structure of a replayed trace whose
	// requests name their prompt blocks (a Mooncake trace's hash_ids); nil
	// otherwise and in traces recorded before it was added.
	ReplayPrefix *ReplayPrefix `json:"replay_prefix,omitempty"`
}

// ReplayPrefix says which requests of a replayed trace share which prompt blocks.
// Request i of a replay level (its i-th request sent, request_id − the level's
// first request_id) is line i of the trace in time order.
type ReplayPrefix struct {
	Format      string `json:"format"`       // the trace's format, "mooncake"
	BlockTokens int    `json:"block_tokens"` // prompt tokens a block id stands for
	Requests    int    `json:"requests"`
	// Blocks counts block references over all requests, UniqueBlocks distinct
	// ids, SharedBlockRefs references to an id an earlier request already sent.
	Blocks          int `json:"blocks"`
	UniqueBlocks    int `json:"unique_blocks"`
	SharedBlockRefs int `json:"shared_block_refs"`
	// PrefixGroups counts distinct first blocks.
	PrefixGroups int `json:"prefix_groups"`
	// Group[i] is request i's prefix group: the first request with the same first
	// block (-1: a request without blocks). SharedPrefixBlocks[i] counts request
	// i's leading blocks an earlier request already sent (what a prefix cache
	// that kept every block would serve).
	Group              []int32 `json:"group"`
	SharedPrefixBlocks []int32 `json:"shared_prefix_blocks"`
}

// ShardInfo says which part of a sharded sweep a trace holds (package shard
// documents the split rules), or, on a merged run, which shards it was made of.
type ShardInfo struct {
	Index int `json:"index"` // 0-based, as Kubernetes' JOB_COMPLETION_INDEX
	Count int `json:"count"`
	// StartAt is the common schedule's start: level k of every shard starts at
	// StartAt + k × (level duration + gap). Zero when the shards were not scheduled.
	StartAt time.Time `json:"start_at,omitzero"`
	// GapS is the schedule's pause between levels, in seconds.
	GapS float64 `json:"gap_s,omitempty"`
	// ClockOffsetNs is the server's clock minus this client's, measured before the
	// sweep from the server's Date headers; ClockUncertaintyNs bounds its error (0
	// with the offset: not measured).
	ClockOffsetNs      int64 `json:"clock_offset_ns,omitempty"`
	ClockUncertaintyNs int64 `json:"clock_uncertainty_ns,omitempty"`
	// Merged lists, on a merged run, the shards it was made of.
	Merged []MergedShard `json:"merged,omitempty"`
}

// MergedShard is one shard of a merged run.
type MergedShard struct {
	Index    int    `json:"index"`
	File     string `json:"file"`
	Hostname string `json:"hostname,omitempty"`
	// ClockOffsetNs is the correction applied to the shard's times (see ShardInfo).
	ClockOffsetNs      int64 `json:"clock_offset_ns,omitempty"`
	ClockUncertaintyNs int64 `json:"clock_uncertainty_ns,omitempty"`
}

// SourceInfo describes the benchmark results an imported run was made from.
type SourceInfo struct {
	Tool    string   `json:"tool"` // vllm, vllm-sweep, sglang, aiperf, guidellm
	Version string   `json:"version,omitempty"`
	Files   []string `json:"files"`
	// Missing lists, in words, what the source does not hold.
	Missing  []string `json:"missing,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// SourceReference is one of the source tool's own summary numbers for a level, in
// seconds for latencies and per second for rates.
type SourceReference struct {
	Metric string  `json:"metric"` // ttft, tpot, itl, e2e, output_tok_s, request_s, requests
	Stat   string  `json:"stat"`   // mean, p50, p90, p95, p99, value
	Value  float64 `json:"value"`
	Key    string  `json:"key"` // the tool's own name for it
}

// Target is the server and model a run measured. BaseURL never carries credentials.
type Target struct {
	BaseURL  string `json:"base_url"`
	Endpoint string `json:"endpoint"` // "chat" or "completions"
	Model    string `json:"model"`
}

// Plan is the sweep as the user asked for it; --resume continues the same plan.
type Plan struct {
	Mode               string    `json:"mode"` // "closed" or "open"
	Concurrency        []int     `json:"concurrency,omitempty"`
	Rates              []float64 `json:"rates,omitempty"`
	Auto               bool      `json:"auto,omitempty"`
	RequestsPerLevel   int       `json:"requests_per_level,omitempty"`
	DurationPerLevelS  float64   `json:"duration_per_level_s,omitempty"`
	Warmup             int       `json:"warmup"`
	PromptTokens       int       `json:"prompt_tokens,omitempty"`
	OutputTokens       int       `json:"output_tokens,omitempty"`
	Dataset            string    `json:"dataset,omitempty"`
	SharedPrefixTokens int       `json:"shared_prefix_tokens,omitempty"`
	IgnoreEOS          bool      `json:"ignore_eos,omitempty"`
	TimeoutS           float64   `json:"timeout_s,omitempty"`
	RequestTimeoutS    float64   `json:"request_timeout_s,omitempty"`
	Seed               uint64    `json:"seed"`
	// Repeat is how many times each level is recorded, back to back; absent = 1.
	Repeat int `json:"repeat,omitempty"`
	// Workload shapes, in the flags' syntax; absent for the fixed lengths, closed
	// or Poisson arrivals and single requests of schema version 1.
	PromptLengths    string    `json:"prompt_lengths,omitempty"` // e.g. "lognormal:2000,0.6"
	OutputLengths    string    `json:"output_lengths,omitempty"`
	DatasetFilter    string    `json:"dataset_filter,omitempty"`
	DatasetMaxTokens int       `json:"dataset_max_tokens,omitempty"`
	Turns            int       `json:"turns,omitempty"`
	ThinkTimeS       float64   `json:"think_time_s,omitempty"`
	Prefixes         int       `json:"prefixes,omitempty"`
	PrefixMix        []float64 `json:"prefix_mix,omitempty"`
	Burstiness       float64   `json:"burstiness,omitempty"` // gamma shape; absent = 1 (Poisson)
	Replay           string    `json:"replay,omitempty"`     // the replayed trace's file name
	ReplaySpeeds     []float64 `json:"replay_speeds,omitempty"`
	// ReplayFormat is the replayed trace's format ("ceiling", "mooncake",
	// "aiperf-single-turn"); absent before it was added (then "ceiling").
	ReplayFormat string `json:"replay_format,omitempty"`
	// Search is the --concurrency auto (or --rate auto) search's settings; absent
	// for a fixed list of levels and in traces recorded before the search.
	Search *SearchPlan `json:"search,omitempty"`
}

// SearchPlan is what the ceiling search was asked to find: its criteria in the
// record flags' syntax (e.g. "ttft p95 <= 2s", "errors <= 5%", "knee < 5% per
// doubling"), the bracket width it stops at, and what bounds it.
type SearchPlan struct {
	Criteria []string `json:"criteria"`
	// Resolution is the widest bracket the search stops at: "10%" of its lower
	// end or a number of requests (or requests/s in open loop), the larger of the
	// two when both are given ("10%,1").
	Resolution string `json:"resolution"`
	// BeyondKV lets the search run levels beyond what the server's KV cache holds.
	BeyondKV bool `json:"beyond_kv,omitempty"`
	// SustainS holds the ceiling found for this long as a level of its own.
	SustainS float64 `json:"sustain_s,omitempty"`
	// Start is the level the search was told to start from (0: chosen from the
	// plan's prediction, the server's declared capacity, or 1).
	Start float64 `json:"start,omitempty"`
	// Knee is the knee criterion the search judged levels by: the gain per
	// doubling below which the curve is flat (0: off). Absent in traces recorded
	// before it was stored; analyze and report judge the run by it by default.
	Knee *float64 `json:"knee,omitempty"`
	// SLOs are the latency criteria, structured as analyze and report apply them.
	SLOs []SLOTarget `json:"slos,omitempty"`
}

// SLOTarget is one latency criterion: Metric's Percentile within Seconds.
type SLOTarget struct {
	Metric     string  `json:"metric"` // ttft, tpot, itl, e2e
	Percentile float64 `json:"percentile"`
	Seconds    float64 `json:"seconds"`
}

// SearchStep is how the ceiling search judged one level: the criteria that failed
// with their evidence, and the bracket right after it (Hi 0: no failing level yet).
// Verdict, Failed and Evidence include the knee, a criterion of the level and the
// one below it, so they are rewritten when a level is added below; the Own fields
// are the level's own judgement, what --resume recomputes the search from.
type SearchStep struct {
	// Phase is why the level ran: start, ramp (geometric up), down (geometric
	// down from a failing start, to what a queueing server ran, or a reference
	// for the knee), bisect, rerun (an invalid level run again, longer),
	// remeasure (a level whose throughput dropped, measured again), sustain (the
	// ceiling held for --sustain).
	Phase string `json:"phase"`
	// Scale is how much longer than the plan's level size the level was sized (a
	// rerun: 2, 4, 8); absent = 1.
	Scale int `json:"scale,omitempty"`
	// Verdict is pending (not judged yet), pass, fail or invalid (not judged: run
	// again longer); traces from before the knee was judged on the whole curve
	// also hold unjudged (the knee had no level below to compare with).
	Verdict  string   `json:"verdict"`
	Failed   []string `json:"failed,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
	// OutputTokS is the level's steady-state output throughput, as analyze
	// measures it (the knee compares it between levels).
	OutputTokS float64 `json:"output_tok_s"`
	// OutputTokSRelSE is its relative standard error within the level (from
	// analyze's bootstrap interval; absent: unknown).
	OutputTokSRelSE float64 `json:"output_tok_s_rel_se,omitempty"`
	// Queued is what the server ran at most, by its own counters, while
	// Waiting requests waited on average, when the level was invalid because the
	// server queued (absent: no such evidence): the search steps down to it.
	Queued      float64  `json:"queued,omitempty"`
	Waiting     float64  `json:"waiting,omitempty"`
	Invalid     string   `json:"invalid,omitempty"`
	OwnFailed   []string `json:"own_failed,omitempty"`
	OwnEvidence []string `json:"own_evidence,omitempty"`
}

// SearchResult is the search's answer: the ceiling (the highest level that passed),
// the bracket it is known within, and the criterion that bounds it with its evidence.
type SearchResult struct {
	Done     bool    `json:"done"`
	Ceiling  float64 `json:"ceiling"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"` // 0: no failing level (bounded by Bound's limit instead)
	Bound    string  `json:"bound"`
	Evidence string  `json:"evidence,omitempty"`
	// Answer is the sentence the live output, analyze and the report all print.
	Answer string `json:"answer"`
	// LevelSeconds is the sum of the search's level durations: its GPU time.
	LevelSeconds float64 `json:"level_seconds"`
	// Sustain is the answer of the --sustain level, when one ran.
	Sustain string `json:"sustain,omitempty"`
	// Limit is the highest level the search could run (0: none), and LimitWhy
	// says what set it (the server's KV cache, the search's maximum).
	Limit    float64 `json:"limit,omitempty"`
	LimitWhy string  `json:"limit_why,omitempty"`
}

// ServerInfo is what the server revealed about itself before the sweep. Unknown
// values are nil.
type ServerInfo struct {
	Kind             engine.Name `json:"kind"` // engine.VLLM, engine.SGLang, ..., engine.Unknown
	Version          string      `json:"version,omitempty"`
	MaxModelLen      *int64      `json:"max_model_len"`
	KVCapacityTokens *int64      `json:"kv_capacity_tokens"`
	BlockSize        *int64      `json:"block_size"`
	NumGPUBlocks     *int64      `json:"num_gpu_blocks"`
	Slots            *int64      `json:"slots"`
	NCtx             *int64      `json:"n_ctx"`
	// KVLayout is "unknown" where the endpoints cannot tell how the KV cache is
	// laid out, so give no single capacity: llama.cpp with several slots, whose
	// slots share one cache of n_ctx tokens (--kv-unified) or own n_ctx each, and
	// /props and /slots read the same either way. KVCapacityTokens is then nil and
	// the two bounds below are what the server declared. Empty otherwise.
	KVLayout string `json:"kv_layout,omitempty"`
	// KVCapacityMinTokens .. KVCapacityMaxTokens is the KV cache when KVLayout is
	// "unknown": n_ctx (one shared cache) .. slots × n_ctx (a cache per slot).
	KVCapacityMinTokens *int64 `json:"kv_capacity_min_tokens,omitempty"`
	KVCapacityMaxTokens *int64 `json:"kv_capacity_max_tokens,omitempty"`
	MetricsURL          string `json:"metrics_url,omitempty"`
	// GPUMetricsURLs are the GPU exporters scraped (record --gpu-metrics-url),
	// without credentials.
	GPUMetricsURLs []string `json:"gpu_metrics_urls,omitempty"`
}

// ClientInfo describes the machine that ran the recorder, so that analyze can tell
// a client bottleneck from a server one.
type ClientInfo struct {
	CPUs      int    `json:"cpus"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	GoVersion string `json:"go_version"`
	Hostname  string `json:"hostname,omitempty"`
}

// Declared is what the user stated about the deployment (it is not measured).
type Declared struct {
	GPU         string `json:"gpu,omitempty"`
	GPUs        int    `json:"gpus,omitempty"`
	TP          int    `json:"tp,omitempty"`
	DP          int    `json:"dp,omitempty"` // data-parallel attention ranks (1 = none)
	PP          int    `json:"pp,omitempty"` // pipeline stages
	EP          bool   `json:"ep,omitempty"` // experts sharded over DP×TP
	ModelConfig string `json:"model_config,omitempty"`
	Notes       string `json:"notes,omitempty"`
}

// LevelInfo records how one sweep step ran, including the client's own load so that
// a client bottleneck can be told from a server one.
type LevelInfo struct {
	Level       int     `json:"level"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	// Repeat is which recording of its sweep point (same concurrency or rate) the
	// level is, 0-based, with --repeat; Level stays distinct for every repeat.
	Repeat   int       `json:"repeat,omitempty"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Requests int       `json:"requests"`
	Errors   int       `json:"errors"`
	// Rows is the number of rows of the level sealed (warm-up included): a level is
	// listed only once all of them are, and --resume re-runs one whose rows are
	// missing. 0 in traces written before it was added.
	Rows int `json:"rows,omitempty"`
	// ClientCPUUtil is the recorder's CPU time over the level divided by wall time
	// times CPUs: near 1 means the client, not the server, may be the limit.
	ClientCPUUtil float64 `json:"client_cpu_util"`
	// SendLagP99S is the p99 of sent_ns - scheduled_ns in open-loop mode, in seconds.
	SendLagP99S float64 `json:"send_lag_p99_s,omitempty"`
	StopReason  string  `json:"stop_reason,omitempty"`
	// Search is how the ceiling search judged this level (nil outside a search).
	Search *SearchStep `json:"search,omitempty"`
	// OutputTokS is the naive output throughput of the level's measured requests
	// (output tokens / first send to last end), as the progress line shows it and
	// --concurrency auto compares it.
	OutputTokS float64 `json:"output_tok_s,omitempty"`
	// Workers and WorkerRate are this shard's share of the level (closed-loop
	// workers, open-loop requests/s) in a sharded sweep; 0 when one client ran
	// the whole level. Concurrency and Rate stay the whole level's target.
	Workers    int     `json:"workers,omitempty"`
	WorkerRate float64 `json:"worker_rate,omitempty"`
	// Imported levels only. Label says which source file (line, sweep point) the
	// level came from. Timing is "relative" when the source tool saved no send
	// times: every request's sent_ns is 0, so latencies are exact but positions in
	// time mean nothing, and throughput must come from SourceDurationS, the tool's
	// own measured duration of the level. References are the tool's own summary
	// numbers.
	Label           string            `json:"label,omitempty"`
	Timing          string            `json:"timing,omitempty"`
	SourceDurationS float64           `json:"source_duration_s,omitempty"`
	References      []SourceReference `json:"references,omitempty"`
}
