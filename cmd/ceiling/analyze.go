package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze/analysistext"
	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
)

const analyzeHead = `Usage: ceiling analyze RUN [RUN ...] [flags]

Reads recorded runs (a trace file, or the RUN.parts directory of an interrupted run;
the RUN.metrics.parquet sidecar is picked up when present) and prints per-level
statistics, the KV capacity, the throughput fit, the ceilings and the warnings.
Several runs are shown side by side. The shard traces of one sweep (record
--shard) are merged into one run first, as 'ceiling merge' does. Published levels
(an InferenceX result JSON, a CSV of levels as 'ceiling whatif' reads) and a
planner's table (--predicted) are set beside the measured runs.

`

const analyzeExample = `Example:
  ceiling analyze run.parquet --slo-ttft 2s --slo-tpot 50ms \
      --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm --gpus 1 --tp 1
  ceiling analyze run-a.parquet run-b.parquet.parts --format json -o analysis.json
  ceiling analyze run-0.parquet run-1.parquet run-2.parquet   # three shards: one run
  ceiling analyze run.parquet samples/published/kimi-k2.5-int4-8xh200-tp8.csv   # published levels beside it
  # a run recorded with --gpu-metrics-url: energy cost beside the GPU-hour cost
  ceiling analyze run.parquet --gpus 8 --gpu-hour-cost 2.5 --power-cost 0.12 --pue 1.3

`

// runAnalyze implements `ceiling analyze`: per-level statistics, the capacity model,
// fits and the realistic ceiling of one or more recorded runs.
func runAnalyze(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("analyze", pflag.ContinueOnError)
	options := addAnalyzeFlags(fs)
	predicted := addPredictedFlag(fs)
	format := fs.String("format", analysistext.FormatText, "output format: "+strings.Join(analysistext.Formats(), ", "))
	out := fs.StringP("output", "o", "-", "write the analysis to this file (- = stdout)")
	force := fs.Bool("force", false, "replace an existing Parquet file at -o (an input is never replaced)")
	h := help{name: "analyze", head: analyzeHead, example: analyzeExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return h.usageError(e, "no run given")
	}
	switch *format {
	case analysistext.FormatText, analysistext.FormatMarkdown, analysistext.FormatJSON:
	default:
		fmt.Fprintf(e.stderr, "ceiling analyze: --format must be one of %s, got %q\n", strings.Join(analysistext.Formats(), ", "), *format)
		return exitUsage
	}
	opt, err := options()
	if err != nil {
		return h.usageError(e, err.Error())
	}
	if err := checkOutput(*out, fs.Args(), *force); err != nil {
		fmt.Fprintf(e.stderr, "ceiling analyze: %s\n", errText(err))
		return exitFailed
	}

	a, code, ok := analyzeGiven(ctx, e, h, fs.Args(), *predicted, opt)
	if !ok {
		return code
	}
	var buf bytes.Buffer
	if err := analysistext.Write(&buf, a, *format); err != nil {
		fmt.Fprintf(e.stderr, "ceiling analyze: %s\n", errText(err))
		return exitFailed
	}
	if err := writeAnalysisOutput(e, *out, buf.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "ceiling analyze: %s\n", errText(err))
		return exitFailed
	}
	return exitOK
}

// checkOutput refuses an -o of analyze or report that would replace one of the
// runs read, their sidecars or anything inside them, anything that is not a regular
// file, or an existing Parquet file without --force ("-" is stdout).
func checkOutput(out string, runs []string, force bool) error {
	if out == "" || out == "-" {
		return nil
	}
	g := atomicfile.Guard{Force: force, ReplaceFiles: true}
	for _, r := range runs {
		g.Inputs = append(g.Inputs, r, trace.MetricsPath(r))
	}
	return guardError(g.Check(out))
}

// guardError names the flag behind atomicfile.Guard's Force field.
func guardError(err error) error {
	if err == nil {
		return nil
	}
	return &flagNamedError{msg: strings.ReplaceAll(err.Error(), "Guard.Force", "--force"), err: err}
}

// writeAnalysisOutput writes data to path atomically, or to stdout for "-" or "".
func writeAnalysisOutput(e env, path string, data []byte) error {
	if path == "" || path == "-" {
		_, err := e.stdout.Write(data)
		return err
	}
	return atomicfile.WriteBytes(path, data)
}
