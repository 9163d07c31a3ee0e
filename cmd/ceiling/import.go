package main

import (
	"context"
	"fmt"
	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/ceiling-llm/ceiling/internal/safetext"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/spf13/pflag"
)

const importHead = `Usage: ceiling import [--from TOOL] FILE [FILE ...] -o run.parquet

Turns the per-request results of a benchmark you already ran into a ceiling trace:
vLLM 'bench serve --save-result --save-detailed' JSON (one file per level, or the
JSON Lines of --append-result), a 'vllm bench sweep' output directory, SGLang
'bench_serving --output-file --output-details' JSON Lines, AIPerf
profile_export.jsonl (with profile_export_aiperf.json beside it), guidellm
benchmarks.json, llmperf NAME_individual_responses.json (with NAME_summary.json
beside it), an inference-perf results directory (per_request_lifecycle_metrics.json
and the stage summaries) and a genai-bench experiment folder. The tool is recognized from the content. The files of one sweep
make one run, levels ordered by concurrency (then rate).

A planner's predictions (AIConfigurator pareto.csv or best_config_topn.csv, or
ceiling's planner CSV/JSON, see docs/predictions.md) are read into a PREDICTED run
in ceiling's planner JSON, never into a trace; give it to analyze or report with
--predicted.

Nothing is invented: what the source lacks is listed in the warnings and in the
trace's metadata. Results without send times (vLLM, SGLang) keep exact latencies,
and their throughput is the tool's own output tokens / duration. Files without
per-request data (summary only) are refused. The tool's own summary numbers are
then compared with ceiling's analysis of the imported rows; differences beyond
float noise are printed with the definition that explains them.

'ceiling analyze' and 'ceiling report' read the same files directly.

`

const importExample = `Example:
  ceiling import vllm-results/*.json -o run.parquet
  ceiling import --from sglang sglang.jsonl -o sglang.parquet
  ceiling import artifacts/run1/profile_export.jsonl -o aiperf.parquet
  ceiling import benchmarks.json -o guidellm.parquet
  ceiling import sweep-output/ -o sweep.parquet
  ceiling import result_outputs/NAME_individual_responses.json -o llmperf.parquet
  ceiling import inference-perf-results/ -o inference-perf.parquet
  ceiling import experiments/my_experiment/ -o genai-bench.parquet
  ceiling import results/agg/pareto.csv -o aic-predicted.json   # AIConfigurator: predictions, not a trace

`

// runImport implements `ceiling import`.
func runImport(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("import", pflag.ContinueOnError)
	from := fs.String("from", importer.FromAuto, "source tool: "+strings.Join(importer.Froms(), ", "))
	out := fs.StringP("output", "o", "", "write the trace to this file (required)")
	runID := fs.String("run-id", "", "run id of the trace (default: the tool and the first file's name)")
	force := fs.Bool("force", false, "replace an existing -o FILE (an input is never replaced)")
	h := help{name: "import", head: importHead, example: importExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return h.usageError(e, "no file given")
	}
	if *out == "" {
		return h.usageError(e, "-o must name the trace file to write")
	}
	if !slices.Contains(importer.Froms(), *from) {
		return h.usageError(e, fmt.Sprintf("--from must be one of %s, got %q", strings.Join(importer.Froms(), ", "), *from))
	}

	if err := guardError((atomicfile.Guard{Inputs: fs.Args(), Force: *force}).Check(*out)); err != nil {
		fmt.Fprintf(e.stderr, "ceiling import: %s\n", errText(err))
		return exitFailed
	}
	if code, done := importPrediction(e, fs.Args(), *out); done {
		return code
	}
	run, err := importer.Import(ctx, fs.Args(), importer.Options{From: *from, RunID: *runID})
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling import: %s\n", errText(err))
		return exitFailed
	}
	if err := importer.WriteFile(*out, run, importer.WriteOptions{RunID: *runID, Version: version}); err != nil {
		fmt.Fprintf(e.stderr, "ceiling import: %s\n", errText(err))
		return exitFailed
	}
	requests := 0
	for _, l := range run.Levels {
		requests += len(l.Requests)
	}
	tool := run.Tool
	if run.ToolVersion != "" {
		tool += " " + run.ToolVersion
	}
	fmt.Fprintf(e.stderr, "ceiling import: read %d file(s) of %s: %d levels, %d requests; wrote %s\n",
		len(run.Files), tool, len(run.Levels), requests, *out)
	for _, m := range run.Missing {
		fmt.Fprintf(e.stderr, "  not in the source: %s\n", m)
	}
	for _, w := range run.Warnings {
		fmt.Fprintf(e.stderr, "  warning: %s\n", safetext.Line(w))
	}

	runs, err := analyzeTrace(ctx, *out, analyze.Options{TimelineLevel: -1})
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling import: analyzing %s: %v\n", *out, err)
		return exitFailed
	}
	for _, r := range runs {
		c := r.SourceComparison
		if c == nil {
			fmt.Fprintf(e.stdout, "%s: the source holds no summary numbers to compare\n", r.RunID)
			continue
		}
		fmt.Fprintf(e.stdout, "compared %d of %s's own summary numbers with ceiling's analysis: %d differ beyond float noise\n",
			c.Checked, c.Tool, len(c.Differences))
		for _, d := range c.Differences {
			fmt.Fprintf(e.stdout, "  %s\n", d)
		}
	}
	return exitOK
}
