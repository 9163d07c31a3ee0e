package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/record"
	"github.com/ceiling-llm/ceiling/record/trace"
	"github.com/spf13/pflag"
)

const recordExample = `Example:
  export OPENAI_API_KEY=...   # only if the server wants a key
  ceiling record --url http://127.0.0.1:8000 --concurrency 1,2,4,8,16,32 \
      --prompt-tokens 1024 --output-tokens 512 -o run.parquet

  ceiling record --url http://127.0.0.1:8000 --concurrency auto -o auto.parquet
  ceiling record --url http://127.0.0.1:8000 --rate 1,2,4 --duration-per-level 60s -o open.parquet
`

// runRecord is `ceiling record`: flags → record.Options → record.Record.
func runRecord(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	url := fs.String("url", "", "server base URL, e.g. http://127.0.0.1:8000 (required; credentials in it are never stored)")
	model := fs.String("model", "", "model id to request (default: the first one /v1/models lists)")
	endpoint := fs.String("endpoint", "chat", "chat (/v1/chat/completions) or completions (/v1/completions)")
	concurrency := fs.String("concurrency", "", "closed-loop levels, e.g. 1,2,4,8, or auto (geometric until throughput stops rising)")
	rates := fs.String("rate", "", "open-loop levels in requests/s with Poisson arrivals, e.g. 1,2,4 (instead of --concurrency)")
	perLevel := fs.Int("requests-per-level", 0, "measured requests per level (default: until every worker completed 4 and the steady state lasted 30s)")
	perLevelDur := fs.Duration("duration-per-level", 0, "send requests for this long per level instead of a count, e.g. 60s")
	maxLevelDur := fs.Duration("max-level-duration", 10*time.Minute, "cap of a level sized by the default rule (neither --requests-per-level nor --duration-per-level)")
	warmup := fs.Int("warmup", 0, "extra requests at the start of each level, recorded with warmup=true")
	promptTokens := fs.Int("prompt-tokens", 1024, "synthetic prompt length in tokens, as the server counts them")
	outputTokens := fs.Int("output-tokens", 512, "max_tokens of each request")
	dataset := fs.String("dataset", "", `JSONL prompts instead of synthetic ones: {"prompt": ...} or {"messages": [...]}, optional "max_tokens"`)
	shared := fs.Int("shared-prefix-tokens", 0, "tokens of common prefix in every synthetic prompt (default: none, each prompt unique)")
	ignoreEOS := fs.Bool("ignore-eos", false, "send ignore_eos: true so output lengths are exact on servers that honour it")
	timeout := fs.Duration("timeout", 5*time.Minute, "fail a request that receives nothing for this long (a stalled stream)")
	grace := fs.Duration("grace", 30*time.Second, "on Ctrl-C, wait this long for requests in flight before recording them as cancelled")
	metricsURL := fs.String("metrics-url", "", "Prometheus metrics to scrape during the run (default: the server's /metrics when it answers; off = none)")
	scrape := fs.Duration("scrape-interval", time.Second, "metrics scrape interval")
	keyEnv := fs.String("api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a Bearer token)")
	insecure := fs.Bool("insecure", false, "do not verify the server's TLS certificate")
	out := fs.StringP("output", "o", "", "trace file to write (- = stdout); parts are sealed in FILE.parts while recording")
	resume := fs.Bool("resume", false, "continue an interrupted recording of -o FILE from its next level (same plan)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic prompts and open-loop arrivals")
	notes := fs.String("notes", "", "free text stored with the run")
	var cf capacityFlags
	cf.addDeployment(fs) // stored as declared, not measured
	h := help{name: "record", head: "Usage: ceiling record --url URL (--concurrency LIST|auto | --rate LIST) -o FILE [flags]\n\n" +
		"Sweeps concurrency levels against an OpenAI-compatible server and writes one Parquet row per request.\n" +
		"--model-config, --gpu, --gpus and --tp are stored in the trace as declared (not measured), for analyze.\n",
		example: recordExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	usageErr := func(msg string) int { return h.usageError(e, msg) }
	if fs.NArg() > 0 {
		return usageErr(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *url == "" {
		return usageErr("--url is required")
	}
	if err := cf.checkDeployment(); err != nil {
		return usageErr(err.Error())
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
		PromptTokens:       *promptTokens,
		OutputTokens:       *outputTokens,
		Dataset:            *dataset,
		SharedPrefixTokens: *shared,
		IgnoreEOS:          *ignoreEOS,
		Timeout:            *timeout,
		Grace:              *grace,
		MetricsURL:         *metricsURL,
		ScrapeInterval:     *scrape,
		Output:             *out,
		Stdout:             e.stdout,
		Resume:             *resume,
		Seed:               *seed,
		Declared:           trace.Declared{GPU: cf.gpu, GPUs: gpus, TP: tp, ModelConfig: cf.modelConfig, Notes: *notes},
		Version:            version,
		Progress:           e.stderr,
		Live:               e.isTerminal,
	}
	if *dataset != "" && !fs.Changed("prompt-tokens") {
		opts.PromptTokens = 0
	}
	if fs.Changed("api-key-env") && opts.APIKey == "" {
		return usageErr(fmt.Sprintf("--api-key-env %s: $%s is empty or unset", *keyEnv, *keyEnv))
	}
	var err error
	if strings.TrimSpace(*concurrency) == "auto" {
		opts.Auto = true
	} else if *concurrency != "" {
		if opts.Concurrency, err = parseInts(*concurrency); err != nil {
			return usageErr("--concurrency: " + err.Error())
		}
	}
	if *rates != "" {
		if opts.Rates, err = parseFloats(*rates); err != nil {
			return usageErr("--rate: " + err.Error())
		}
	}
	if err := opts.Validate(); err != nil {
		return usageErr(err.Error())
	}

	info, err := record.Record(ctx, opts)
	if info.RunID != "" && (err == nil || errors.Is(err, record.ErrInterrupted) || errors.Is(err, record.ErrServerGone)) {
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
			where, len(info.Levels), requests, errs, info.StopReason)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling record: %v\n", err)
		return exitFailed
	}
	return exitOK
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
