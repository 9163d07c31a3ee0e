package main

import (
	"sort"
	"strings"
)

// recordFlagNames maps the record.Options fields that package record's errors name
// to the flags that set them: the library speaks of its fields, the CLI of its
// flags, and the user reads the same message either way.
func recordFlagNames() map[string]string {
	return map[string]string{
		"Options.Auto":               "--concurrency auto",
		"Options.BeyondKV":           "--beyond-kv",
		"Options.Concurrency":        "--concurrency",
		"Options.DurationPerLevel":   "--duration-per-level",
		"Options.Endpoint":           "--endpoint",
		"Options.GPUMetricsURLs":     "--gpu-metrics-url",
		"Options.Grace":              "--grace",
		"Options.Output":             "-o",
		"Options.OutputTokens":       "--output-tokens",
		"Options.PromptTokens":       "--prompt-tokens",
		"Options.RateAuto":           "--rate auto",
		"Options.Rates":              "--rate",
		"Options.Repeat":             "--repeat",
		"Options.Replay":             "--replay",
		"Options.RequestTimeout":     "--request-timeout",
		"Options.RequestsPerLevel":   "--requests-per-level",
		"Options.Resolution":         "--resolution",
		"Options.Resume":             "--resume",
		"Options.ScrapeInterval":     "--scrape-interval",
		"Options.SearchStart":        "--search-start",
		"Options.SharedPrefixTokens": "--shared-prefix-tokens",
		"Options.Sustain":            "--sustain",
		"Options.Timeout":            "--timeout",
		"Options.Turns":              "--turns",
		"Options.Warmup":             "--warmup",
		"Options.Force":              "--force",
		"Options.URL":                "--url",
		"Options.Model":              "--model",
		"Options.Burstiness":         "--burstiness",
		"Options.Dataset":            "--dataset",
		"Options.DatasetFilter":      "--dataset-filter",
		"Options.DatasetMaxTokens":   "--dataset-max-tokens",
		"Options.PrefixMix":          "--prefix-mix",
		"Options.Prefixes":           "--prefixes",
		"Options.ReplaySpeeds":       "--replay-speed",
		"Options.ReplayFormat":       "--replay-format",
		"Options.ReplayBlockTokens":  "--replay-block-tokens",
		"Options.ThinkTime":          "--think-time",
		"Options.APIKey":             "an environment variable named by --api-key-env",
		"Options.ProbeTimeout":       "--probe-timeout",
	}
}

// recordFlags rewrites record.Options field names into flags, longer names first
// (OutputTokens before Output).
func recordFlags() *strings.Replacer {
	flags := recordFlagNames()
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, n, flags[n])
	}
	return strings.NewReplacer(pairs...)
}

// recordError rewrites an error of package record so that it names the flags the
// user typed; errors.Is still sees the original through Unwrap.
func recordError(err error) error {
	if err == nil {
		return nil
	}
	return &flagNamedError{msg: recordFlags().Replace(err.Error()), err: err}
}

type flagNamedError struct {
	msg string
	err error
}

func (e *flagNamedError) Error() string { return e.msg }
func (e *flagNamedError) Unwrap() error { return e.err }
