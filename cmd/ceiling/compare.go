package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/compare"
	"github.com/spf13/pflag"
)

const compareHead = `Usage: ceiling compare BASELINE CANDIDATE [flags]
       ceiling compare --baseline A1,A2,A3 --candidate B1,B2,B3 [flags]

Compares a candidate deployment with a baseline (a new engine version, another
quantization, a changed flag) and tells a real difference from noise. Each side is
a run (a trace, a RUN.parts directory, another tool's result files) or several
repeats of one configuration. Levels are matched by concurrency (or rate); at each
and at the realistic ceiling, throughput, goodput, TTFT, TPOT and E2E p50/p99 and
the error rate get a difference with a 95% interval and a verdict: better, worse or
no significant difference. One run per side: the analysis' bootstrap over time
blocks of each level; several: the spread between repeats.

A regression is a gated metric worse beyond --threshold and significant after
Holm's correction over the gated tests (default gate: the ceiling, output tok/s,
goodput, TTFT p99, TPOT p50 and the error rate at each level). docs/compare.md
has the method and the measured false-alarm rate and power.

Exit codes: 0 no gated metric regressed, 1 one did (the output names it), 2 the
runs cannot be compared (a different model or workload, no shared level, an
unreadable input) or a usage error.

`

const compareExample = `Example:
  ceiling compare baseline.parquet candidate.parquet
  ceiling compare --baseline a1.parquet,a2.parquet,a3.parquet --candidate b1.parquet,b2.parquet,b3.parquet
  ceiling compare main.parquet pr.parquet --format markdown > comment.md   # a PR comment
  ceiling compare main.parquet pr.parquet --format json --threshold 0.1 --gate output_tok_s,ttft_p99_s

`

// Output formats of compare.
var compareFormats = []string{"text", "markdown", "json"}

// runCompare implements `ceiling compare`.
func runCompare(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	baseline := fs.StringSlice("baseline", nil, "the baseline's runs: one, or several repeats of one configuration (comma-separated or the flag repeated)")
	candidate := fs.StringSlice("candidate", nil, "the candidate's runs, as --baseline")
	format := fs.String("format", "text", "output format: "+strings.Join(compareFormats, ", "))
	threshold := fs.Float64("threshold", compare.DefaultThreshold, "practical threshold: a worsening smaller than this fraction is not a regression (0.05 = 5%)")
	gate := fs.StringSlice("gate", nil, "the gated metrics, those that can fail the comparison (default "+strings.Join(compare.DefaultGate, ",")+"; known: "+strings.Join(compare.Metrics(), ",")+")")
	ignoreCorrupt := fs.Bool("ignore-corrupt", false, "read the intact parts of a RUN.parts directory whose other parts are corrupt, with a warning naming each part left out")
	sloTTFT := fs.Duration("slo-ttft", 0, "latency target for time to first token, e.g. 2s: gives goodput and the SLO ceiling (0 = none)")
	sloTPOT := fs.Duration("slo-tpot", 0, "latency target for time per output token, e.g. 50ms (0 = none)")
	sloE2E := fs.Duration("slo-e2e", 0, "latency target for the whole request, e.g. 30s (0 = none)")
	h := help{name: "compare", head: compareHead, example: compareExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	base, cand := *baseline, *candidate
	switch {
	case len(base) == 0 && len(cand) == 0 && fs.NArg() == 2:
		base, cand = fs.Args()[:1], fs.Args()[1:]
	case len(base) > 0 && len(cand) > 0 && fs.NArg() == 0:
	case len(base) > 0 || len(cand) > 0:
		return h.usageError(e, "give both --baseline and --candidate (and no other run), or BASELINE CANDIDATE")
	default:
		return h.usageError(e, fmt.Sprintf("want BASELINE CANDIDATE, got %d runs", fs.NArg()))
	}
	if !contains(compareFormats, *format) {
		return h.usageError(e, fmt.Sprintf("--format must be one of %s, got %q", strings.Join(compareFormats, ", "), *format))
	}
	if !(*threshold > 0 && *threshold < 1) {
		return h.usageError(e, fmt.Sprintf("--threshold must be a fraction in (0, 1), e.g. 0.05 for 5%%, got %g", *threshold))
	}
	for _, g := range *gate {
		if !contains(compare.Metrics(), g) {
			return h.usageError(e, fmt.Sprintf("--gate: unknown metric %q (known: %s)", g, strings.Join(compare.Metrics(), ", ")))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--slo-ttft", *sloTTFT}, {"--slo-tpot", *sloTPOT}, {"--slo-e2e", *sloE2E}} {
		if d.v < 0 {
			return h.usageError(e, fmt.Sprintf("%s must not be negative, got %s", d.name, d.v))
		}
	}
	opt := analyze.Options{IgnoreCorrupt: *ignoreCorrupt, TimelineLevel: -1, SLO: analyze.SLO{
		TTFT: optSeconds(*sloTTFT), TPOT: optSeconds(*sloTPOT), E2E: optSeconds(*sloE2E)}}

	sides := [2][]analyze.Run{}
	for i, names := range [][]string{base, cand} {
		a, err := analyzeInputs(ctx, names, opt, e.stderr)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling compare: cannot compare: %v\n", flagError(err))
			return exitUsage
		}
		sides[i] = a.Runs
	}
	res, err := compare.Compare(sides[0], sides[1], compare.Options{Threshold: *threshold, Gate: *gate})
	if err != nil {
		var nc *compare.NotComparableError
		if errors.As(err, &nc) {
			fmt.Fprintf(e.stderr, "ceiling compare: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(e.stderr, "ceiling compare: %v\n", compareFlagError(err))
		return exitUsage
	}
	if err := writeComparison(e.stdout, res, *format); err != nil {
		fmt.Fprintf(e.stderr, "ceiling compare: writing stdout: %v\n", err)
		return exitUsage
	}
	if res.Regression {
		return exitFailed
	}
	return exitOK
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func optSeconds(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	s := d.Seconds()
	return &s
}

// compareFlagError names compare's option fields as the flags that set them.
func compareFlagError(err error) error {
	return errors.New(strings.NewReplacer("threshold ", "--threshold ", "gate: ", "--gate: ").Replace(err.Error()))
}

// writeComparison writes res in format (compareFormats).
func writeComparison(w io.Writer, res *compare.Result, format string) error {
	switch format {
	case "markdown":
		return res.WriteMarkdown(w)
	case "json":
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return res.WriteText(w)
}
