package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/ceiling-llm/ceiling/report"
	"github.com/spf13/pflag"
)

const reportHead = `Usage: ceiling report RUN [RUN ...] -o report.html [flags]

Analyzes recorded runs (trace files or RUN.parts directories) like 'ceiling analyze'
and writes one HTML file that opens offline: the verdict, key numbers, warnings,
charts and tables. Several runs are overlaid in every chart and compared side by side.
The shard traces of one sweep (record --shard) are merged into one run first.

`

const reportExample = `Example:
  ceiling report run.parquet -o report.html --slo-ttft 2s --slo-tpot 50ms \
      --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm --gpus 1 --tp 1
  ceiling report bf16.parquet fp8.parquet -o compare.html --title "Llama 3.1 8B: bf16 vs fp8"
  ceiling report run-0.parquet run-1.parquet run-2.parquet -o report.html   # shards
  ceiling report run.parquet -o report.html --gpus 8 --gpu-hour-cost 2.5 --power-cost 0.12 --pue 1.3

`

// runReport implements `ceiling report`: analyze one or more runs and write one
// self-contained HTML page.
func runReport(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	options := addAnalyzeFlags(fs)
	predicted := addPredictedFlag(fs)
	out := fs.StringP("output", "o", "report.html", "write the report to this file (- = stdout)")
	force := fs.Bool("force", false, "replace an existing Parquet file at -o (an input is never replaced)")
	title := fs.String("title", "", "page title (default: from the model names)")
	h := help{name: "report", head: reportHead, example: reportExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return h.usageError(e, "no run given")
	}
	if *out == "" {
		fmt.Fprintln(e.stderr, "ceiling report: -o must name a file, or - for stdout")
		return exitUsage
	}
	opt, err := options()
	if err != nil {
		return h.usageError(e, err.Error())
	}
	if err := checkOutput(*out, fs.Args(), *force); err != nil {
		fmt.Fprintf(e.stderr, "ceiling report: %s\n", errText(err))
		return exitFailed
	}

	a, code, ok := analyzeGiven(ctx, e, h, fs.Args(), *predicted, opt)
	if !ok {
		return code
	}
	var buf bytes.Buffer
	ropt := report.Options{Title: *title, GeneratedAt: time.Now(), Tool: "ceiling " + version}
	if err := report.Write(&buf, a, ropt); err != nil {
		fmt.Fprintf(e.stderr, "ceiling report: %s\n", errText(err))
		return exitFailed
	}
	if *out == "-" {
		if _, err := e.stdout.Write(buf.Bytes()); err != nil {
			fmt.Fprintf(e.stderr, "ceiling report: writing stdout: %s\n", errText(err))
			return exitFailed
		}
		return exitOK
	}
	if err := atomicfile.WriteBytes(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "ceiling report: %s\n", errText(err))
		return exitFailed
	}
	fmt.Fprintf(e.stderr, "ceiling report: wrote %s (%d KB)\n", *out, (buf.Len()+1023)/1024)
	return exitOK
}
