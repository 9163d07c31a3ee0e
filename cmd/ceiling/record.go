package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/internal/urlcred"
	"github.com/ceiling-llm/ceiling/record"
	"github.com/ceiling-llm/ceiling/shard"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
)

const recordExample = `Example:
  export OPENAI_API_KEY=...   # only if the server wants a key
  ceiling record --url http://127.0.0.1:8000 --concurrency 1,2,4,8,16,32 \
      --prompt-tokens 1024 --output-tokens 512 -o run.parquet

  ceiling record --url http://127.0.0.1:8000 --concurrency auto -o auto.parquet

  # Search the highest concurrency that keeps p95 TTFT under 2 s, within 10%:
  ceiling record --url http://127.0.0.1:8000 --concurrency auto \
      --slo-ttft p95:2s --slo-tpot 50ms --sustain 5m -o search.parquet
  ceiling record --url http://127.0.0.1:8000 --rate 1,2,4 --duration-per-level 60s -o open.parquet

  # GPU power and energy per token from the DCGM exporter of each node:
  ceiling record --url http://10.0.0.5:8000 --concurrency 1,4,16,64 \
      --gpu-metrics-url http://10.0.0.5:9400/metrics \
      --gpu-metrics-url http://10.0.0.6:9400/metrics -o run.parquet

  # shard 1 of 3 of one sweep (run the other two elsewhere), then merge the three:
  ceiling record --url http://10.0.0.5:8000 --shard 1/3 --start-at 2026-12-02T10:00:00Z \
      --concurrency 48,96,192 --duration-per-level 120s -o 'run-{shard}.parquet'
  ceiling merge run-0.parquet run-1.parquet run-2.parquet -o run.parquet
`

// runRecord is `ceiling record`: flags → record.Options → record.Record.
func runRecord(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	url := fs.String("url", "", "server base URL, e.g. http://127.0.0.1:8000 (required; credentials in it are never stored)")
	model := fs.String("model", "", "model id to request (default: the first one /v1/models lists)")
	endpoint := fs.String("endpoint", "chat", "chat (/v1/chat/completions) or completions (/v1/completions)")
	concurrency := fs.String("concurrency", "", "closed-loop levels, e.g. 1,2,4,8, or auto: search the ceiling (ramp ×2 until a criterion fails, then bisect to --resolution)")
	rates := fs.String("rate", "", "open-loop levels in requests/s with Poisson arrivals, e.g. 1,2,4, or auto: search the highest rate that passes the criteria (instead of --concurrency)")
	sloTTFT := fs.String("slo-ttft", "", "search criterion: TTFT percentile target, e.g. p95:2s (a bare 2s is p99), several as p95:1s,p99.9:3s")
	sloTPOT := fs.String("slo-tpot", "", "search criterion: TPOT percentile target, e.g. p99:50ms")
	sloITL := fs.String("slo-itl", "", "search criterion: inter-token gap percentile target, e.g. p99:100ms")
	sloE2E := fs.String("slo-e2e", "", "search criterion: whole-request latency percentile target, e.g. p95:30s")
	minGoodput := fs.String("min-goodput", "", "search criterion: share of requests meeting every TTFT/TPOT/E2E target, e.g. 90%")
	maxErrors := fs.String("max-errors", "5%", "search criterion: share of requests that may fail (off = none)")
	knee := fs.String("knee", "5%", "search criterion: throughput gain per doubling below which a level is past the knee (off = none; --rate auto: off unless given, overload bounds it)")
	kvEvidence := fs.String("kv-evidence", "on", "search criterion: fail a level where the server preempts or retracts requests or reports KV-cache errors (on|off)")
	kvUsage := fs.String("kv-usage", "off", "search criterion: fail a level where the server's mean KV-cache usage reaches this share, e.g. 95%")
	resolution := fs.String("resolution", "", "search: stop when the bracket is within this, e.g. 10%, 2 or 10%,1 (default 10%,1: the larger of 10% and 1 request; --rate auto: 10%)")
	beyondKV := fs.Bool("beyond-kv", false, "search: run levels beyond what the server's declared KV cache holds")
	sustain := fs.Duration("sustain", 0, "search: hold the ceiling found for this long as one more level and report whether the criteria kept passing, e.g. 5m")
	searchStart := fs.Float64("search-start", 0, "search: the first level (default: the plan's prediction for the declared --model-config/--gpu, else the server's declared capacity, else 1)")
	perLevel := fs.Int("requests-per-level", 0, "measured requests per level (default: until the level's steady state holds enough completions over enough request lifetimes to be valid, and lasted 30s; docs/recording.md)")
	perLevelDur := fs.Duration("duration-per-level", 0, "send requests for this long per level instead of a count, e.g. 60s")
	maxLevelDur := fs.Duration("max-level-duration", 10*time.Minute, "cap of a level sized by the default rule (neither --requests-per-level nor --duration-per-level)")
	repeat := fs.Int("repeat", 1, "record each level N times, all repeats of a level back to back before the next (the server's caches and batch state carry over between consecutive levels in any order; in order keeps --concurrency auto and the progress point by point); analyze pools them and shows the spread")
	warmup := fs.Int("warmup", 0, "extra requests at the start of each level, recorded with warmup=true")
	promptTokens := fs.String("prompt-tokens", "1024", "synthetic prompt length in tokens, as the server counts them: N, uniform:MIN-MAX, normal:MEAN,SD, lognormal:MEDIAN,SIGMA (drawn per request with --seed)")
	outputTokens := fs.String("output-tokens", "512", "max_tokens of each request: N, uniform:MIN-MAX, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, or dataset (the dataset's answer lengths)")
	dataset := fs.String("dataset", "", `real prompts instead of synthetic ones: ShareGPT JSON ("conversations"), {"messages": [...]} JSONL or {"prompt": ...} JSONL, told apart by content; the dataset's answers set max_tokens`)
	datasetFilter := fs.String("dataset-filter", "", "keep dataset entries within token bounds: min-prompt=N,max-prompt=N,min-output=N,max-output=N")
	datasetMax := fs.Int("dataset-max-tokens", 0, "drop dataset entries whose prompt + output exceed N tokens (default: the server's max_model_len when known)")
	turns := fs.Int("turns", 0, "multi-turn conversations: each worker sends N turns, each with the whole history (chat only, closed loop)")
	think := fs.Duration("think-time", 0, "pause between a conversation's turns, e.g. 2s")
	prefixes := fs.Int("prefixes", 0, "distinct shared prefixes (system prompts) of --shared-prefix-tokens each (default 1)")
	prefixMix := fs.String("prefix-mix", "", "how often each prefix is used, e.g. 0.7,0.2,0.1 (default: equally)")
	burstiness := fs.Float64("burstiness", 1, "gamma shape of --rate inter-arrival times: 1 = Poisson, below 1 burstier, above 1 more regular")
	replay := fs.String("replay", "", `JSONL trace to replay at its timestamps: {"timestamp": s, "prompt_tokens": N (or "prompt"), "output_tokens": N} (instead of --concurrency/--rate)`)
	replayFormat := fs.String("replay-format", "", "format of --replay: ceiling, mooncake (timestamp ms, input_length, output_length, hash_ids) or aiperf-single-turn (default: told from the first line)")
	replayBlock := fs.Int("replay-block-tokens", 0, "prompt tokens one hash id of a --replay mooncake trace stands for (default 512, as Mooncake's traces)")
	replaySpeed := fs.String("replay-speed", "", "time scales of --replay, one level each, e.g. 1,2,4 (2 = twice as fast; default 1)")
	shared := fs.Int("shared-prefix-tokens", 0, "tokens of common prefix in every synthetic prompt (default: none, each prompt unique)")
	prefixHitRate := fs.Float64("prefix-hit-rate", 0, "target share of prompt tokens served from the server's prefix cache, e.g. 0.8: sizes the shared prefix (whole blocks of 16) and flushes the cache (vLLM /reset_prefix_cache, SGLang /flush_cache) and primes each prefix group before every level; the analysis checks each level's hit rate against it (docs/recording.md)")
	ignoreEOS := fs.Bool("ignore-eos", false, "send ignore_eos: true so output lengths are exact on servers that honour it")
	timeout := fs.Duration("timeout", 5*time.Minute, "fail a request that receives no token for this long (a stalled stream; SSE keep-alive comments do not count)")
	requestTimeout := fs.Duration("request-timeout", record.DefaultRequestTimeout, "fail a request that has not finished after this long, however much it still sends")
	probeTimeout := fs.Duration("probe-timeout", 10*time.Second, "wait this long for each answer of the probe before the sweep (/v1/models, /metrics, ...); a server that scales to zero may need more; with --model a slow model list is skipped")
	grace := fs.Duration("grace", 30*time.Second, "on Ctrl-C, wait this long for requests in flight before recording them as cancelled")
	metricsURL := fs.String("metrics-url", "", "Prometheus metrics to scrape during the run (default: the server's /metrics when it answers; off = none)")
	scrape := fs.Duration("scrape-interval", time.Second, "metrics scrape interval")
	gpuMetrics := fs.StringArray("gpu-metrics-url", nil, "GPU exporter metrics to scrape during the run (NVIDIA DCGM exporter, AMD device-metrics exporter), for power and energy per token; repeat once per node")
	keyEnv := fs.String("api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a Bearer token)")
	insecure := fs.Bool("insecure", false, "do not verify the server's TLS certificate")
	out := fs.StringP("output", "o", "", "trace file to write (- = stdout); parts are sealed in FILE.parts while recording")
	resume := fs.Bool("resume", false, "continue an interrupted recording of -o FILE from its next level (same plan)")
	force := fs.Bool("force", false, "replace an existing -o FILE, its metrics sidecar and an interrupted run's FILE.parts")
	seed := fs.Uint64("seed", 0, "seed of the synthetic prompts, their lengths and open-loop arrivals (default: a fresh one per run, recorded in the trace, so that no two runs send the same prompts; give a run's seed to repeat it on purpose)")
	notes := fs.String("notes", "", "free text stored with the run")
	shardFlag := fs.String("shard", "", "run shard I of N of the sweep (0-based, e.g. 0/3): each level's concurrency or rate is split across the shards; 'ceiling merge' joins their traces (default: from JOB_COMPLETION_INDEX and CEILING_SHARD_COUNT in a Kubernetes Indexed Job)")
	startAt := fs.String("start-at", "", "start the sweep at this absolute time (RFC 3339, e.g. 2026-12-02T10:00:00Z) and run level k in its own window of the schedule, the same on every shard; needs --duration-per-level")
	scheduleGap := fs.Duration("schedule-gap", shard.DefaultGap, "with --start-at, the pause between scheduled levels, for the requests in flight at a level's end to finish")
	runID := fs.String("run-id", "", "id of the run (default: the start time and a random suffix; shards of one sweep must share it, which --start-at gives them)")
	var cf capacityFlags
	cf.addDeployment(fs) // stored as declared, not measured
	cfgFlags := addConfigFlags(fs)
	h := help{name: "record", head: "Usage: ceiling record --url URL (--concurrency LIST|auto | --rate LIST) -o FILE [flags]\n\n" +
		"Sweeps concurrency levels against an OpenAI-compatible server and writes one Parquet row per request.\n" +
		"--model-config, --gpu, --gpus, --tp, --dp, --pp and --ep are stored in the trace as declared (not measured).\n",
		example: recordExample + configExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	usageErr := func(msg string) int { return h.usageError(e, msg) }
	if fs.NArg() > 0 {
		return usageErr(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	cfg, cfgErr := cfgFlags.apply(fs) // flags not given here, from --config or --config-from
	if cfgErr != nil {
		return usageErr(cfgErr.Error())
	}
	usageErr = func(msg string) int { return h.usageError(e, cfg.blame(msg)) }
	if *url == "" {
		return usageErr("--url is required")
	}
	if err := cf.checkDeployment(); err != nil {
		return usageErr(err.Error())
	}
	// A zero the user typed is a mistake, not a request for the default.
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"requests-per-level", *perLevel <= 0},
		{"repeat", *repeat <= 0},
		{"prompt-tokens", zeroInt(*promptTokens) && *dataset == ""},
		{"output-tokens", zeroInt(*outputTokens)},
		{"duration-per-level", *perLevelDur <= 0},
		{"timeout", *timeout <= 0},
		{"request-timeout", *requestTimeout <= 0},
		{"probe-timeout", *probeTimeout <= 0},
		{"scrape-interval", *scrape <= 0},
	} {
		if fs.Changed(f.name) && f.bad {
			return usageErr(fmt.Sprintf("--%s %s: must be positive", f.name, fs.Lookup(f.name).Value))
		}
	}
	if *resume && *force {
		return usageErr("--resume and --force exclude each other: --resume continues FILE.parts, --force discards it")
	}
	gpus, tp := cf.declared()
	opts := record.Options{
		URL:                *url,
		Endpoint:           *endpoint,
		Model:              *model,
		APIKeyEnv:          *keyEnv,
		APIKey:             e.getenv(*keyEnv),
		Insecure:           *insecure,
		RequestsPerLevel:   *perLevel,
		DurationPerLevel:   *perLevelDur,
		MaxLevelDuration:   *maxLevelDur,
		Warmup:             *warmup,
		Repeat:             *repeat,
		Dataset:            *dataset,
		DatasetFilter:      *datasetFilter,
		DatasetMaxTokens:   *datasetMax,
		Turns:              *turns,
		ThinkTime:          *think,
		Prefixes:           *prefixes,
		Burstiness:         *burstiness,
		Replay:             *replay,
		ReplayFormat:       *replayFormat,
		ReplayBlockTokens:  *replayBlock,
		SharedPrefixTokens: *shared,
		PrefixHitRate:      *prefixHitRate,
		IgnoreEOS:          *ignoreEOS,
		Timeout:            *timeout,
		RequestTimeout:     *requestTimeout,
		ProbeTimeout:       *probeTimeout,
		Grace:              *grace,
		Abort:              e.abort,
		MetricsURL:         *metricsURL,
		ScrapeInterval:     *scrape,
		GPUMetricsURLs:     *gpuMetrics,
		Output:             *out,
		Stdout:             e.stdout,
		Resume:             *resume,
		Force:              *force,
		Seed:               *seed,
		Declared:           trace.Declared{GPU: cf.gpu, GPUs: gpus, TP: tp, DP: declaredOver1(cf.dp), PP: declaredOver1(cf.pp), EP: cf.ep, ModelConfig: cf.modelConfig, Notes: *notes},
		Version:            version,
		Progress:           e.stderr,
		Live:               e.isTerminal,
		Config:             givenConfig(fs),
	}
	// A length is a whole number (fixed, as before) or a distribution.
	if n, err := strconv.Atoi(strings.TrimSpace(*promptTokens)); err == nil && n > 0 {
		opts.PromptTokens = n
	} else {
		opts.PromptLengths = *promptTokens
	}
	if n, err := strconv.Atoi(strings.TrimSpace(*outputTokens)); err == nil && n > 0 {
		opts.OutputTokens = n
	} else {
		opts.OutputLengths = *outputTokens
	}
	if *dataset != "" && !fs.Changed("prompt-tokens") {
		opts.PromptTokens = 0
	}
	if !envName.MatchString(*keyEnv) {
		// Most likely the key itself was typed here: never echo it.
		return usageErr("--api-key-env takes the name of an environment variable (such as OPENAI_API_KEY), not the key itself; the value given is not a variable name and is not shown")
	}
	if fs.Changed("api-key-env") && opts.APIKey == "" {
		return usageErr(fmt.Sprintf("--api-key-env %s: $%s is empty or unset", *keyEnv, *keyEnv))
	}
	// The key goes to a URL that a file or a trace chose only when the command line
	// asks for it (--api-key-env given here): a shared config never sends a secret
	// to its own host unasked. A config cannot set api-key-env (config.go).
	if cfg.sets("url") && !fs.Changed("api-key-env") && opts.APIKey != "" {
		fmt.Fprintf(e.stderr, "note: not sending $%s as the API key: the URL %s comes from %s, not the command line; give --url or --api-key-env %s here to send it\n",
			*keyEnv, urlcred.Strip(*url), strings.TrimSuffix(cfg.source, " (its stored config)"), *keyEnv)
		opts.APIKey = ""
	}
	var err error
	if strings.TrimSpace(*concurrency) == "auto" {
		opts.Auto = true
	} else if strings.TrimSpace(*rates) == "auto" {
		opts.RateAuto = true
	} else if *concurrency != "" {
		if opts.Concurrency, err = parseInts(*concurrency); err != nil {
			return usageErr("--concurrency: " + err.Error())
		}
	}
	if *rates != "" && !opts.RateAuto {
		if opts.Rates, err = parseFloats(*rates); err != nil {
			return usageErr("--rate: " + err.Error())
		}
	}
	if *prefixMix != "" {
		if opts.PrefixMix, err = parseWeights(*prefixMix); err != nil {
			return usageErr("--prefix-mix: " + err.Error())
		}
	}
	if *replaySpeed != "" {
		if opts.ReplaySpeeds, err = parseFloats(*replaySpeed); err != nil {
			return usageErr("--replay-speed: " + err.Error())
		}
	}
	if code, ok := shardOptions(e, fs, &opts, *shardFlag, *startAt, *scheduleGap, *runID, usageErr); !ok {
		return code
	}
	if msg := searchFlags(fs, &opts, searchFlagValues{ttft: *sloTTFT, tpot: *sloTPOT, itl: *sloITL, e2e: *sloE2E,
		goodput: *minGoodput, errors: *maxErrors, knee: *knee, kvEvidence: *kvEvidence, kvUsage: *kvUsage,
		resolution: *resolution, beyondKV: *beyondKV, sustain: *sustain, start: *searchStart}); msg != "" {
		return usageErr(msg)
	}
	if opts.Auto && opts.SearchStart == 0 {
		tokens := opts.PromptTokens + opts.OutputTokens
		// vLLM's reserve until the probe names the engine; then the engine's own.
		opts.SearchStart, opts.SearchStartWhy = predictedStart(cf, tokens, "")
		opts.PlanStart = func(serverKind string) (float64, string) { return predictedStart(cf, tokens, serverKind) }
	}
	if err := opts.Validate(); err != nil {
		return usageErr(recordError(err).Error())
	}

	cfg.checkPlan(e.stderr, opts)
	info, err := record.Record(ctx, opts)
	if info.RunID != "" && (err == nil || errors.Is(err, record.ErrInterrupted) || errors.Is(err, record.ErrServerGone) || errors.Is(err, record.ErrClientFileLimit) || errors.Is(err, record.ErrLevelFailed) || errors.Is(err, record.ErrNoCeiling)) {
		where := opts.Output
		if where == "-" {
			where = "stdout"
		}
		requests, errs := 0, 0
		for _, l := range info.Levels {
			requests += l.Requests
			errs += l.Errors
		}
		fmt.Fprintf(e.stderr, "wrote %s: %d levels, %d measured requests, %d errors (%s)\n",
			where, len(info.Levels), requests, errs, safetext.Line(info.StopReason))
		if info.Search != nil && !info.Search.Done {
			fmt.Fprintf(e.stderr, "%s\n", safetext.Text(info.Search.Answer))
		}
	}
	if err == nil && allFailed(info) {
		// The trace is kept (its error column says why), but nothing was measured.
		fmt.Fprintf(e.stderr, "ceiling record: every one of the %d measured requests failed: the trace holds no measurement (its error column, or ceiling analyze, says why)\n", measured(info))
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling record: %s\n", errText(recordError(err)))
		if errors.Is(err, record.ErrInterrupted) {
			return exitInterrupted
		}
		return exitFailed
	}
	return exitOK
}

// measured is how many measured requests the run's levels hold.
func measured(info trace.RunInfo) int {
	n := 0
	for _, l := range info.Levels {
		n += l.Requests
	}
	return n
}

// allFailed says whether the run measured requests and every one failed.
func allFailed(info trace.RunInfo) bool {
	errs := 0
	for _, l := range info.Levels {
		errs += l.Errors
	}
	return measured(info) > 0 && errs >= measured(info)
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer (want a list like 1,2,4,8 or auto)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%q is not a positive number (want a list like 1,2,4)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// envName is what an environment variable's name looks like.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// zeroInt says whether a length flag is a typed 0 (anything else that is not a
// positive length, a negative number or a bad distribution, is refused where the
// lengths are parsed).
func zeroInt(s string) bool {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return err == nil && n == 0
}

// declaredOver1 stores a DP or PP size only when it says something (above 1).
func declaredOver1(n int) int {
	if n > 1 {
		return n
	}
	return 0
}

func parseWeights(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v >= 0) || v > 1e12 {
			return nil, fmt.Errorf("%q is not a non-negative number (want weights like 0.7,0.2,0.1)", f)
		}
		out = append(out, v)
	}
	return out, nil
}
