package record

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/ceiling-llm/ceiling/record/trace"
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

	PromptTokens       int
	OutputTokens       int
	Dataset            string
	SharedPrefixTokens int
	IgnoreEOS          bool
	Timeout            time.Duration // per-request stall timeout
	Grace              time.Duration // how long Ctrl-C waits for in-flight requests

	MetricsURL     string // "" = the server's /metrics when it answers; "off" = none
	ScrapeInterval time.Duration

	Output string    // trace path, or "-" for Stdout
	Stdout io.Writer // where "-" writes
	Resume bool
	Seed   uint64

	Declared trace.Declared
	Version  string

	Progress io.Writer // progress lines (stderr); nil = none
	Live     bool      // rewrite one line per level (a terminal)

	// PartRows seals a part every this many rows within a level (default 5000).
	PartRows int
	// MaxAutoConcurrency bounds --concurrency auto when the server reveals no KV
	// capacity (default 1024).
	MaxAutoConcurrency int

	// crashAfterLevels, in tests, makes Record return right after sealing that many
	// levels, without merging: what a kill -9 between levels leaves on disk.
	crashAfterLevels int
	// steadyState, in tests, replaces sizeSteadyState of the default level size.
	steadyState time.Duration
}

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
	if o.Grace == 0 {
		o.Grace = 30 * time.Second
	}
	if o.ScrapeInterval == 0 {
		o.ScrapeInterval = time.Second
	}
	if o.PartRows == 0 {
		o.PartRows = 5000
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
}

// defaultSize reports whether levels are sized by the default rule (sizing.go).
func (o *Options) defaultSize() bool { return o.RequestsPerLevel == 0 && o.DurationPerLevel == 0 }

// validate checks the options that need no server.
func (o *Options) validate() error {
	switch {
	case o.Output == "":
		return errors.New("no output: give -o FILE (or -o - for stdout)")
	case o.Auto && len(o.Rates) > 0:
		return errors.New("--concurrency auto and --rate exclude each other")
	case len(o.Concurrency) > 0 && len(o.Rates) > 0:
		return errors.New("--concurrency and --rate exclude each other")
	case !o.Auto && len(o.Concurrency) == 0 && len(o.Rates) == 0:
		return errors.New("no sweep: give --concurrency LIST|auto or --rate LIST")
	case o.RequestsPerLevel > 0 && o.DurationPerLevel > 0:
		return errors.New("--requests-per-level and --duration-per-level exclude each other")
	case o.RequestsPerLevel < 0 || o.DurationPerLevel < 0 || o.Warmup < 0:
		return errors.New("--requests-per-level, --duration-per-level and --warmup must not be negative")
	case o.OutputTokens < 1:
		return errors.New("--output-tokens must be positive")
	case o.Dataset == "" && o.PromptTokens < 1:
		return errors.New("--prompt-tokens must be positive")
	case o.SharedPrefixTokens < 0:
		return errors.New("--shared-prefix-tokens must not be negative")
	case o.Endpoint != "chat" && o.Endpoint != "completions":
		return fmt.Errorf("--endpoint %q: want chat or completions", o.Endpoint)
	case o.Resume && o.Output == "-":
		return errors.New("--resume needs an output file, not -o -")
	}
	for _, c := range o.Concurrency {
		if c < 1 {
			return fmt.Errorf("concurrency %d: levels must be at least 1", c)
		}
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
		SharedPrefixTokens: o.SharedPrefixTokens,
		IgnoreEOS:          o.IgnoreEOS,
		TimeoutS:           o.Timeout.Seconds(),
		Seed:               o.Seed,
	}
	if o.Dataset != "" {
		p.PromptTokens = 0
		p.Dataset = filepath.Base(o.Dataset)
	}
	if len(o.Rates) > 0 {
		p.Mode = "open"
		p.Rates = o.Rates
	}
	return p
}

// Validate checks the options that need no server (the CLI's usage errors).
func (o Options) Validate() error {
	o.defaults()
	return o.validate()
}
