package record

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/ceiling-llm/ceiling/shard"
	"github.com/ceiling-llm/ceiling/trace"
)

// Options is everything a recording needs; the CLI fills it from flags.
type Options struct {
	URL      string
	Endpoint string // "chat" (default) or "completions"
	Model    string // default: the first model /v1/models lists
	APIKey   string
	// APIKeyEnv names where the key came from, for messages (never the key itself).
	APIKeyEnv string
	Insecure  bool

	Concurrency      []int     // closed-loop levels
	Auto             bool      // --concurrency auto
	Rates            []float64 // open-loop levels (requests/s)
	RequestsPerLevel int
	DurationPerLevel time.Duration
	// MaxLevelDuration caps a level sized by the default rule (sizing.go), used
	// when RequestsPerLevel and DurationPerLevel are both 0 (default 10 min).
	MaxLevelDuration time.Duration
	Warmup           int
	// Repeat records each level this many times, back to back (default 1): see
	// levelAt for why in order.
	Repeat int

	PromptTokens       int
	OutputTokens       int
	Dataset            string
	SharedPrefixTokens int
	IgnoreEOS          bool
	Timeout            time.Duration // per-request stall timeout: no token for this long
	// RequestTimeout bounds one whole request (default 30 minutes), however much
	// the server still sends.
	RequestTimeout time.Duration
	// ProbeTimeout bounds each plain request of the probe (/v1/models, /metrics,
	// ...); 0 = 10 s. With Model given, a model list slower than this is skipped.
	ProbeTimeout time.Duration
	Grace        time.Duration // how long Ctrl-C waits for in-flight requests
	// Abort, once closed after ctx is cancelled (a second Ctrl-C), ends the grace
	// period at once: the requests in flight are recorded as cancelled.
	Abort <-chan struct{}

	// Workload shapes (docs/tour.md, "Workloads"); see workloads.go.
	PromptLengths     string        // --prompt-tokens as a distribution ("" = PromptTokens, fixed)
	OutputLengths     string        // --output-tokens as a distribution ("" = OutputTokens, fixed)
	DatasetFilter     string        // --dataset-filter min-prompt=N,...
	DatasetMaxTokens  int           // drop dataset entries whose prompt+output exceed it (0 = max_model_len)
	Turns             int           // turns per conversation (0 or 1 = single requests)
	ThinkTime         time.Duration // pause between a conversation's turns
	Prefixes          int           // distinct shared prefixes (with SharedPrefixTokens)
	PrefixMix         []float64     // how often each prefix is used (nil = equally)
	Burstiness        float64       // gamma shape of open-loop inter-arrival times (0 or 1 = Poisson)
	Replay            string        // JSONL trace to replay at its timestamps
	ReplaySpeeds      []float64     // one level per time scale of the replay (default 1)
	ReplayFormat      string        // "ceiling", "mooncake", "aiperf-single-turn"; "" tells from the file
	ReplayBlockTokens int           // prompt tokens of one hashed block of a Mooncake trace (default 512)
	// PrefixHitRate is a target share of prompt tokens served from the server's
	// prefix cache: it sizes the shared prefix, and each level is preceded by a
	// cache flush and a priming of the prefix groups (prefixhit.go).
	PrefixHitRate float64

	MetricsURL     string // "" = the server's /metrics when it answers; "off" = none
	ScrapeInterval time.Duration
	// GPUMetricsURLs are GPU exporters (NVIDIA DCGM exporter, AMD device-metrics
	// exporter), one per node, scraped like MetricsURL into the same sidecar with
	// each sample labelled ceiling_gpu_source="host:port".
	GPUMetricsURLs []string

	Output string    // trace path, or "-" for Stdout
	Stdout io.Writer // where "-" writes
	Resume bool
	// Force replaces an existing trace at Output, its sidecar and an existing parts
	// directory; without it they are refused (a trace holds hours of GPU time).
	Force bool
	// Seed fixes the prompts, their lengths and open-loop arrivals; 0 = a fresh
	// seed per run (recorded in the plan and config), the interrupted run's with
	// Resume.
	Seed uint64

	// Shard is this recorder's part of a sweep split across several clients
	// (package shard); the zero value records the whole sweep.
	Shard shard.Spec
	// Schedule, when its Start is set, runs level k in its window of the common
	// wall-clock schedule the shards share (package shard).
	Schedule shard.Schedule
	// RunID names the run (default: the start time and a random suffix). The
	// shards of one sweep share it.
	RunID string

	Declared trace.Declared
	Version  string
	// Config is the configuration as given (trace.RunInfo.Config), stored as is:
	// the CLI leaves the key, URL credentials and the output file out of it.
	Config map[string]string

	Progress io.Writer // progress lines (stderr); nil = none
	Live     bool      // rewrite one line per level (a terminal)

	// PartRows seals a part every this many rows within a level (default 5000).
	PartRows int
	// MaxAutoConcurrency bounds --concurrency auto when the server reveals no KV
	// capacity (default 1024).
	MaxAutoConcurrency int

	// The ceiling search (--concurrency auto, --rate auto; search.go).
	RateAuto bool // --rate auto: the search over open-loop rates
	// Criteria a search level must pass (nil: DefaultCriteria; empty: none but the
	// knee). The knee is Knee: the gain per doubling below which a level fails
	// (0: 5% with Auto, off with RateAuto; negative: off).
	Criteria []searchrule.Criterion
	Knee     float64
	// Analyzer computes the figures a search judges its levels by, from the
	// sealed parts (a search needs it; cmd/ceiling gives analyze.SearchFigures).
	Analyzer searchrule.Analyzer
	// Resolution is the widest bracket the search stops at: "10%", "2" (requests,
	// or requests/s), or both, the larger of the two ("10%,1", the default).
	Resolution string
	// BeyondKV lets the search run levels beyond what the server's KV cache holds.
	BeyondKV bool
	// Sustain holds the ceiling found for this long as a level of its own (0: no).
	Sustain time.Duration
	// SearchStart is the level the search starts from (0: the server's declared
	// capacity, else 1), and SearchStartWhy says where it comes from (the plan's
	// prediction for the declared deployment).
	SearchStart    float64
	SearchStartWhy string
	// PlanStart, with Auto, plans the search's start again once the probe has
	// found the server's engine (trace.ServerInfo.Kind: engine.VLLM, engine.SGLang, ...): the
	// CLI's prediction from
	// the KV capacity model, whose reserve depends on the engine. A start above 0
	// replaces SearchStart and SearchStartWhy; 0 keeps them. nil: no re-planning.
	PlanStart func(serverKind string) (start float64, why string)

	// crashAfterLevels, in tests, makes Record return right after sealing that many
	// levels, without merging: what a kill -9 between levels leaves on disk.
	crashAfterLevels int
	// steadyState, in tests, replaces levelrule.SteadyState in the default level size.
	steadyState time.Duration
}

// DefaultRequestTimeout bounds a request when Options.RequestTimeout is 0: long
// enough for 32k output tokens at 20 tokens/s.
const DefaultRequestTimeout = 30 * time.Minute

// Bounds of the sizes a user gives: beyond them a flag is a mistake, and honouring
// it would exhaust the client's memory (prompts are built in memory) or overflow
// the trace's int32 columns.
const (
	MaxTokensFlag  = 1 << 24 // --prompt-tokens, --output-tokens: longer than any model's context
	MaxConcurrency = 1 << 20 // --concurrency
	MaxRepeat      = 100     // --repeat: more is a typo, not an experiment
)

func (o *Options) defaults() {
	if o.Endpoint == "" {
		o.Endpoint = "chat"
	}
	if o.PromptTokens == 0 && o.Dataset == "" {
		o.PromptTokens = 1024
	}
	if o.OutputTokens == 0 {
		o.OutputTokens = 512
	}
	if o.MaxLevelDuration <= 0 {
		o.MaxLevelDuration = defaultMaxLevelDuration
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Grace == 0 {
		o.Grace = 30 * time.Second
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.PartRows == 0 {
		o.PartRows = 5000
	}
	if o.Repeat == 0 {
		o.Repeat = 1
	}
	if o.MaxAutoConcurrency == 0 {
		o.MaxAutoConcurrency = 1024
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	if o.Auto && len(o.Concurrency) == 0 {
		o.Concurrency = nil
	}
	if o.searching() {
		if o.Criteria == nil {
			o.Criteria = DefaultCriteria()
		}
		switch {
		case o.Knee == 0 && o.RateAuto:
			// In open loop a level's throughput is its offered rate until the
			// server saturates, and where it stops following is the overload
			// criterion; a knee between close rates compares two figures that
			// differ by little more than the window's noise, and fails at random.
			o.Knee = -1
		case o.Knee == 0:
			o.Knee = defaultKnee
		}
		if o.Resolution == "" {
			o.Resolution = "10%,1"
			if o.RateAuto {
				o.Resolution = "10%"
			}
		}
	}
	o.workloadDefaults()
}

// searching reports whether the levels are chosen by the ceiling search.
func (o *Options) searching() bool { return o.Auto || o.RateAuto }

// defaultSize reports whether levels are sized by the default rule (sizing.go).
func (o *Options) defaultSize() bool { return o.RequestsPerLevel == 0 && o.DurationPerLevel == 0 }

// validate checks the options that need no server.
func (o *Options) validate() error {
	switch {
	case o.Output == "":
		return errors.New("no output: give Options.Output FILE (or Options.Output - for stdout)")
	case o.Auto && (len(o.Rates) > 0 || o.RateAuto):
		return errors.New("Options.Auto and Options.Rates exclude each other")
	case o.RateAuto && len(o.Concurrency) > 0:
		return errors.New("Options.Concurrency and Options.Rates exclude each other")
	case o.searching() && o.Replay != "":
		return errors.New("Options.Replay and a search (Options.Auto, Options.RateAuto) exclude each other")
	case o.searching() && o.Turns > 1:
		return errors.New("Options.Turns and a search (Options.Auto, Options.RateAuto) exclude each other: a conversation's levels are not comparable steps")
	case o.searching() && o.Analyzer == nil:
		return errors.New("Options.Analyzer is required by a search (Options.Auto, Options.RateAuto): it computes the figures each level is judged by")
	case o.Sustain < 0 || o.SearchStart < 0:
		return errors.New("Options.Sustain and Options.SearchStart must not be negative")
	case !o.searching() && (o.Sustain > 0 || o.BeyondKV || o.SearchStart > 0 || o.Resolution != ""):
		return errors.New("Options.Sustain, Options.BeyondKV, Options.SearchStart and Options.Resolution belong to a search: give Options.Auto or Options.RateAuto")
	case len(o.Concurrency) > 0 && len(o.Rates) > 0:
		return errors.New("Options.Concurrency and Options.Rates exclude each other")
	case !o.searching() && len(o.Concurrency) == 0 && len(o.Rates) == 0 && o.Replay == "":
		return errors.New("no sweep: give Options.Concurrency LIST|auto or Options.Rates LIST")
	case o.RequestsPerLevel > 0 && o.DurationPerLevel > 0:
		return errors.New("Options.RequestsPerLevel and Options.DurationPerLevel exclude each other")
	case o.Repeat < 1 || o.Repeat > MaxRepeat:
		return fmt.Errorf("Options.Repeat %d: want 1 to %d recordings of each level", o.Repeat, MaxRepeat)
	case o.RequestsPerLevel < 0 || o.DurationPerLevel < 0 || o.Warmup < 0:
		return errors.New("Options.RequestsPerLevel, Options.DurationPerLevel and Options.Warmup must not be negative")
	case o.OutputTokens < 1:
		return errors.New("Options.OutputTokens must be positive")
	case o.OutputTokens > MaxTokensFlag:
		return fmt.Errorf("Options.OutputTokens %d: at most %d", o.OutputTokens, MaxTokensFlag)
	case o.Dataset == "" && o.PromptTokens < 1:
		return errors.New("Options.PromptTokens must be positive")
	case o.PromptTokens > MaxTokensFlag:
		return fmt.Errorf("Options.PromptTokens %d: at most %d (longer than any model's context)", o.PromptTokens, MaxTokensFlag)
	case o.SharedPrefixTokens < 0:
		return errors.New("Options.SharedPrefixTokens must not be negative")
	case o.SharedPrefixTokens > MaxTokensFlag:
		return fmt.Errorf("Options.SharedPrefixTokens %d: at most %d", o.SharedPrefixTokens, MaxTokensFlag)
	case o.Timeout < 0 || o.RequestTimeout < 0 || o.Grace < 0 || o.ScrapeInterval < 0:
		return errors.New("Options.Timeout, Options.RequestTimeout, Options.Grace and Options.ScrapeInterval must not be negative")
	case o.validateWorkload() != nil:
		return o.validateWorkload()
	case o.Endpoint != "chat" && o.Endpoint != "completions":
		return fmt.Errorf("Options.Endpoint %q: want chat or completions", o.Endpoint)
	case o.Resume && o.Output == "-":
		return errors.New("Options.Resume needs an output file, not Options.Output -")
	}
	if err := o.validateShard(); err != nil {
		return err
	}
	if err := client.CheckURL(o.URL); err != nil {
		return err
	}
	if o.searching() {
		if _, _, err := parseResolution(o.Resolution); err != nil {
			return fmt.Errorf("Options.Resolution: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, u := range o.GPUMetricsURLs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("Options.GPUMetricsURLs %q: want an http(s) URL of a GPU exporter's metrics, e.g. http://node1:9400/metrics", client.StripCredentials(u))
		}
		if seen[p.Host] {
			return fmt.Errorf("Options.GPUMetricsURLs: %s is given twice: each exporter (node) once", p.Host)
		}
		seen[p.Host] = true
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			return fmt.Errorf("concurrency %d: levels must be at least 1", c)
		}
		if c > MaxConcurrency {
			return fmt.Errorf("concurrency %d: at most %d", c, MaxConcurrency)
		}
	}
	if len(o.Concurrency) > 0 && o.RequestsPerLevel > 0 {
		// A level with fewer requests than workers never has them all in flight,
		// and would be labelled with a concurrency it never reached.
		if m := slices.Max(o.Concurrency); o.RequestsPerLevel < m {
			return fmt.Errorf("Options.RequestsPerLevel %d is below Options.Concurrency %d: that level could never have %d requests in flight; pass Options.RequestsPerLevel %d or more (or Options.DurationPerLevel)",
				o.RequestsPerLevel, m, m, m)
		}
	}
	if err := checkFileLimit(o.maxConcurrency()); err != nil {
		return err
	}
	for _, r := range o.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return fmt.Errorf("rate %v: rates must be positive requests per second", r)
		}
	}
	return nil
}

func (o *Options) plan() trace.Plan {
	p := trace.Plan{
		Mode:               "closed",
		Concurrency:        o.Concurrency,
		Auto:               o.Auto,
		RequestsPerLevel:   o.RequestsPerLevel,
		DurationPerLevelS:  o.DurationPerLevel.Seconds(),
		Warmup:             o.Warmup,
		PromptTokens:       o.PromptTokens,
		OutputTokens:       o.OutputTokens,
		Dataset:            o.Dataset,
		SharedPrefixTokens: o.sharedPrefix(),
		IgnoreEOS:          o.IgnoreEOS,
		TimeoutS:           o.Timeout.Seconds(),
		RequestTimeoutS:    o.RequestTimeout.Seconds(),
		Seed:               o.Seed,
	}
	if o.Repeat > 1 {
		p.Repeat = o.Repeat
	}
	if o.Dataset != "" {
		p.PromptTokens = 0
		p.Dataset = filepath.Base(o.Dataset)
	}
	if len(o.Rates) > 0 || o.RateAuto {
		p.Mode = "open"
		p.Rates = o.Rates
	}
	if o.searching() {
		p.Auto = true
		p.Search = o.searchPlan()
	}
	o.planWorkload(&p)
	return p
}

// Validate checks the options that need no server (the CLI's usage errors).
func (o Options) Validate() error {
	o.defaults()
	return o.validate()
}

// Plan is the plan a recording with these options stores (trace.RunInfo.Plan): the
// CLI compares it with a trace's before re-running that trace's config.
func (o Options) Plan() trace.Plan {
	o.defaults()
	return o.plan()
}

// maxConcurrency is the largest number of requests in flight the plan asks for.
func (o *Options) maxConcurrency() int {
	m := slices.Max(append([]int{1}, o.Concurrency...))
	if o.Auto {
		m = max(m, 64, int(o.SearchStart))
	}
	return m
}

// fileReserve is what the recorder needs open besides its connections: the trace,
// parts, metrics scrapes, probes, standard streams.
const fileReserve = 64

// checkFileLimit refuses a concurrency the process cannot open connections for: each
// request in flight holds a socket, and past RLIMIT_NOFILE requests would fail with
// "too many open files" while the level is labelled with a concurrency it never
// reached. (Go already raises the soft limit to the hard one at start.)
func checkFileLimit(conns int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // unknown: nothing to check against
	}
	return fileLimitError(conns, lim.Cur)
}

func fileLimitError(conns int, limit uint64) error {
	need := uint64(conns) + fileReserve
	if need <= limit {
		return nil
	}
	return fmt.Errorf("concurrency %d needs about %d open files, but this process may open %d (ulimit -n): raise the limit (ulimit -n %d, or the hard limit in /etc/security/limits.conf) or lower Options.Concurrency",
		conns, need, limit, need)
}

// validateShard checks what a sharded or scheduled sweep needs: the shards must
// end each level together, so levels last a fixed duration, and every shard must
// run the same levels, so the sweep is a fixed list.
func (o *Options) validateShard() error {
	if o.Shard.Count != 0 {
		if err := o.Shard.Validate(); err != nil {
			return err
		}
	}
	if err := o.Schedule.Validate(); err != nil {
		return err
	}
	if !o.Shard.Sharded() && o.Schedule.Start.IsZero() {
		return nil
	}
	switch {
	case o.DurationPerLevel <= 0:
		return errors.New("a sharded or scheduled sweep needs Options.DurationPerLevel: every shard must end each level at the same time")
	case o.Auto:
		return errors.New("Options.Auto cannot be sharded or scheduled: each shard would decide the next level alone; give the levels as a list")
	case o.Replay != "":
		return errors.New("Options.Replay cannot be sharded or scheduled: the replayed trace is one stream")
	}
	return nil
}
