package record

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
	"github.com/ceiling-llm/ceiling/trace"
)

// The workload options of a recording (length distributions, dataset filter,
// conversations, shared prefixes, bursty arrivals, trace replay): their checks,
// their defaults and their place in the plan.

// workloadDefaults fills what the workload options imply.
func (o *Options) workloadDefaults() {
	if o.PromptLengths != "" {
		if l, err := workload.ParseLengths(o.PromptLengths); err == nil && l.Kind == "fixed" {
			o.PromptTokens, o.PromptLengths = int(l.A), ""
		} else if err == nil && l.Kind != "dataset" {
			// The median stands for the distribution where one length is needed
			// (the --concurrency auto cap).
			o.PromptTokens = max(1, int(math.Round(l.Quantile(0.5))))
		}
	}
	if o.OutputLengths != "" {
		if l, err := workload.ParseLengths(o.OutputLengths); err == nil && l.Kind == "fixed" {
			o.OutputTokens, o.OutputLengths = int(l.A), ""
		} else if err == nil && l.Kind != "dataset" {
			o.OutputTokens = max(1, int(math.Round(l.Quantile(0.5))))
		}
	}
	if o.Replay != "" && len(o.ReplaySpeeds) == 0 {
		o.ReplaySpeeds = []float64{1}
	}
	if o.Burstiness == 1 {
		o.Burstiness = 0 // Poisson, as schema version 1 wrote it
	}
	if o.Turns == 1 {
		o.Turns = 0
	}
}

// validateWorkload checks the workload options (usage errors, exit 2).
func (o *Options) validateWorkload() error {
	var pl, ol workload.Lengths
	var err error
	if o.PromptLengths != "" {
		if pl, err = workload.ParseLengths(o.PromptLengths); err != nil {
			return fmt.Errorf("Options.PromptTokens %w", err)
		}
	}
	if o.OutputLengths != "" {
		if ol, err = workload.ParseLengths(o.OutputLengths); err != nil {
			return fmt.Errorf("Options.OutputTokens %w", err)
		}
	}
	if _, err := workload.ParseFilter(o.DatasetFilter); err != nil {
		return fmt.Errorf("Options.DatasetFilter %w", err)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case pl.Kind == "dataset" && o.Dataset == "":
		return errors.New("Options.PromptTokens dataset needs Options.Dataset FILE")
	case o.Dataset != "" && pl.Kind != "" && pl.Kind != "dataset":
		return fmt.Errorf("Options.PromptTokens %s: with Options.Dataset the prompts are the dataset's; give Options.PromptTokens dataset or leave it out", o.PromptLengths)
	case ol.Kind == "dataset" && o.Dataset == "":
		return errors.New("Options.OutputTokens dataset needs Options.Dataset FILE (its answers' lengths)")
	case (o.DatasetFilter != "" || o.DatasetMaxTokens != 0) && o.Dataset == "":
		return errors.New("Options.DatasetFilter and Options.DatasetMaxTokens need Options.Dataset FILE")
	case o.DatasetMaxTokens < 0:
		return errors.New("Options.DatasetMaxTokens must not be negative")
	case o.Turns < 0:
		return errors.New("Options.Turns must not be negative")
	case o.Turns > 1 && o.Endpoint != "chat":
		return errors.New("Options.Turns needs Options.Endpoint chat (a conversation is a list of messages)")
	case o.Turns > 1 && (len(o.Rates) > 0 || o.Replay != ""):
		return errors.New("Options.Turns runs closed-loop conversations: give Options.Concurrency, not Options.Rates or Options.Replay")
	case o.Turns > 1 && o.Dataset != "":
		return errors.New("Options.Turns makes synthetic conversations; it does not take Options.Dataset")
	case o.ThinkTime < 0:
		return errors.New("Options.ThinkTime must not be negative")
	case o.ThinkTime > 0 && o.Turns < 2:
		return errors.New("Options.ThinkTime needs Options.Turns 2 or more")
	case o.Prefixes < 0:
		return errors.New("Options.Prefixes must not be negative")
	case o.Prefixes > 1 && o.SharedPrefixTokens == 0:
		return errors.New("Options.Prefixes needs Options.SharedPrefixTokens N (the length of each prefix)")
	case len(o.PrefixMix) > 0 && len(o.PrefixMix) != max(o.Prefixes, 1):
		return fmt.Errorf("Options.PrefixMix has %d weights for %d prefixes (Options.Prefixes)", len(o.PrefixMix), max(o.Prefixes, 1))
	case o.SharedPrefixTokens > 0 && o.Dataset != "":
		return errors.New("Options.SharedPrefixTokens shapes synthetic prompts; it does not take Options.Dataset")
	case !finite(o.Burstiness) || o.Burstiness < 0:
		return fmt.Errorf("Options.Burstiness %v: want a positive gamma shape (1 = Poisson, below 1 burstier)", o.Burstiness)
	case o.Burstiness > 0 && o.Burstiness != 1 && len(o.Rates) == 0 && !o.RateAuto:
		// The search over rates (RateAuto) sends open-loop arrivals too.
		return errors.New("Options.Burstiness shapes open-loop arrivals: it needs Options.Rates or Options.RateAuto")
	case o.Replay != "" && (len(o.Concurrency) > 0 || o.Auto || len(o.Rates) > 0):
		return errors.New("Options.Replay sends at the trace's timestamps: it excludes Options.Concurrency and Options.Rates")
	case o.Replay != "" && (o.Dataset != "" || o.DurationPerLevel > 0 || o.Warmup > 0):
		return errors.New("Options.Replay takes its requests from the trace: it excludes Options.Dataset, Options.DurationPerLevel and Options.Warmup")
	case (o.ReplayFormat != "" || o.ReplayBlockTokens != 0) && o.Replay == "":
		return errors.New("Options.ReplayFormat and Options.ReplayBlockTokens need Options.Replay FILE")
	case o.ReplayFormat != "" && !slices.Contains(replayFormats, o.ReplayFormat):
		return fmt.Errorf("Options.ReplayFormat %q: want one of %s", o.ReplayFormat, strings.Join(replayFormats, ", "))
	case o.ReplayBlockTokens < 0:
		return fmt.Errorf("Options.ReplayBlockTokens %d: want a positive token count", o.ReplayBlockTokens)
	case len(o.ReplaySpeeds) > 0 && o.Replay == "":
		return errors.New("Options.ReplaySpeeds needs Options.Replay FILE")
	}
	for _, w := range o.PrefixMix {
		if !finite(w) || w < 0 {
			return fmt.Errorf("Options.PrefixMix weight %v: weights must be non-negative numbers", w)
		}
	}
	for _, s := range o.ReplaySpeeds {
		if !finite(s) || s <= 0 {
			return fmt.Errorf("Options.ReplaySpeeds %v: speeds must be positive (2 = twice as fast)", s)
		}
	}
	return nil
}

// syntheticConfig is the synthetic workload the options ask for. A replay's
// lengths are its own; its median prompt is the length calibrated.
func (o *Options) syntheticConfig(replay []replayEntry) (workload.Config, error) {
	cfg := workload.Config{Seed: o.workloadSeed(), SharedPrefix: o.SharedPrefixTokens, Prefixes: o.Prefixes, Mix: o.PrefixMix,
		Prompt: workload.Lengths{Kind: "fixed", A: float64(o.PromptTokens)},
		Output: workload.Lengths{Kind: "fixed", A: float64(o.OutputTokens)}}
	var err error
	if o.PromptLengths != "" {
		if cfg.Prompt, err = workload.ParseLengths(o.PromptLengths); err != nil {
			return cfg, fmt.Errorf("Options.PromptTokens %w", err)
		}
	}
	if o.OutputLengths != "" {
		if cfg.Output, err = workload.ParseLengths(o.OutputLengths); err != nil {
			return cfg, fmt.Errorf("Options.OutputTokens %w", err)
		}
	}
	if len(replay) > 0 {
		cfg.Prompt = workload.Lengths{Kind: "fixed", A: float64(replayMedianPrompt(replay))}
	}
	return cfg, nil
}

// replayBlockTokens is the prompt tokens of one hashed block of a replayed trace.
func (o *Options) replayBlockTokens() int {
	if o.ReplayBlockTokens > 0 {
		return o.ReplayBlockTokens
	}
	return mooncakeBlockTokens
}

// planWorkload records the workload options in the plan.
func (o *Options) planWorkload(p *trace.Plan) {
	p.PromptLengths, p.OutputLengths = o.PromptLengths, o.OutputLengths
	p.DatasetFilter, p.DatasetMaxTokens = o.DatasetFilter, o.DatasetMaxTokens
	p.Turns, p.ThinkTimeS = o.Turns, o.ThinkTime.Seconds()
	p.Prefixes, p.PrefixMix = o.Prefixes, o.PrefixMix
	p.Burstiness = o.Burstiness
	if o.Replay != "" {
		p.Mode = "replay"
		p.Replay = filepath.Base(o.Replay)
		p.ReplaySpeeds = o.ReplaySpeeds
		p.PromptTokens, p.OutputTokens, p.RequestsPerLevel = 0, 0, 0
	}
}

// requestsPlanned is how many requests the sweep sends, when the plan says it
// (0: unknown, a duration per level or --concurrency auto).
func (r *recorder) requestsPlanned() int {
	o := r.opts
	if o.DurationPerLevel > 0 || o.searching() || o.defaultSize() {
		return 4096
	}
	return (o.Warmup + o.RequestsPerLevel) * max(1, len(o.Concurrency)+len(o.Rates))
}

// outputControl says what enforces output lengths on a server of kind: max_tokens
// always; with --ignore-eos, ignore_eos, and min_tokens = max_tokens where the
// server takes it (vLLM and SGLang; llama.cpp and others do not document it).
func outputControl(ignoreEOS bool, kind engine.Name) (string, bool) {
	if !ignoreEOS {
		return "max_tokens (the model may stop earlier; --ignore-eos asks for exact lengths)", false
	}
	if e, ok := engine.Of(kind); ok && e.MinTokens {
		return "max_tokens + ignore_eos + min_tokens (" + string(kind) + ")", true
	}
	return "max_tokens + ignore_eos (min_tokens not sent: " + string(kind) + " server)", false
}

// request is request id's prompt and max_tokens; idx is its index in the level (a
// replay's line).
func (r *recorder) request(id, idx int64) (client.Prompt, int) {
	if r.replay != nil {
		e := r.replay[idx%int64(len(r.replay))]
		mt := e.outputTokens
		if mt == 0 {
			mt = r.opts.OutputTokens
		}
		if e.prompt != "" {
			return client.Prompt{Text: e.prompt}, mt
		}
		if len(e.hashIDs) > 0 {
			// id − idx is the level's first id: each level is its own pass, so a
			// level does not find the blocks of the level before it cached.
			return r.workload.Blocks(uint64(id-idx), e.hashIDs, r.opts.replayBlockTokens(), e.promptTokens), mt
		}
		return r.workload.Sized(id, e.promptTokens), mt
	}
	return r.workload.Prompt(id, idx)
}
