package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/analyze/analysistext"
	"github.com/spf13/pflag"
)

const whatifHead = `Usage: ceiling whatif RUN|LEVELS.csv|INFERENCEX.json [flags] [changes]

Analyzes one recorded run like 'ceiling analyze' (same flags: the model config and the
GPU of the measured deployment are required, except for other request lengths or
max_model_len alone, which the server's declared KV capacity answers: the KV ceiling
only) and predicts it under a change (the --to-* flags): other request lengths,
max_model_len, KV dtype, GPU count or shape, or another catalog GPU. It prints the
what-if alone (the full analysis only with --analysis): the ceiling, measured beside
PREDICTED, then every measured level predicted at the same concurrency (throughput,
per-user speed, TTFT, TPOT), each with an interval, and the predicted throughput at
each level's measured per-user speed.

The model: each level's measured share of its roofline with prefill (prompt FLOPs and
KV reads included, so longer prompts never raise a prediction) times the changed
deployment's roofline at the same concurrency, carried on each decode step less a
fixed step overhead (CPU scheduling, launches, sampling; more per pipeline stage)
that the predicted step pays again; both rooflines count FP4 tensor cores at the share of their peak FLOP/s
public measurements reach, and a factor applies between NVIDIA's and AMD's GPUs
(docs/predictions.md). Each interval is an 80% interval calibrated for the kind of
change (another NVIDIA GPU, a move to, from or between AMD's, precision or shape,
request lengths, concurrency) on public measurements held out from it, TTFT with its
own, wider one (docs/validation.md says how often each held). Every prediction assumes
the measured engine release: between releases the public figures moved more than
between GPUs. A level
beyond what the changed KV cache holds is marked "beyond model", not given a number; a
measured level that was itself invalid is marked "invalid". The measured batch limit
and knee carry over to the ceiling only where shape and GPU are unchanged. Each
ceiling row names the concurrency its throughput is at; a predicted ceiling past every
valid measured level is marked EXTRAPOLATED, and the first note compares the two at
equal concurrency. See docs/predictions.md; docs/validation.md scores the model
against public figures.

Published points as the baseline: instead of a run, give a CSV of levels with a
header, one row per level (concurrency and output_tok_s_per_gpu or output_tok_s
required; input_tokens, output_tokens, per_user_tok_s, ttft_ms, tpot_ms optional), or
an InferenceX result JSON of one configuration; the deployment they were measured on
is given by the usual flags (--gpu, --gpus, --tp, --weight-dtype, ...; points that
name another GPU than --gpu are refused), and the
request lengths, where the file lacks them, by --points-input-tokens and
--points-output-tokens. The output is the same, marked "built from summary points".

`

const whatifExample = `Example:
  ceiling whatif run.parquet --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm \
      --to-kv-dtype fp8 --to-prompt-tokens 8000
  ceiling whatif run.parquet --model-config kimi.json --gpu rtx-pro-6000 --gpus 8 --tp 8 \
      --weights-gib 70.8 --to-dp 2 --to-tp 4 --to-ep
  ceiling whatif run.parquet --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm \
      --gpus 1 --to-gpu h200 --format json     # per-level predictions with intervals
  ceiling whatif published.csv --model-config kimi.json --gpu b200 --gpus 8 --tp 8 \
      --weight-dtype fp4 --to-gpu h200         # published levels as the baseline
`

// runWhatIf implements `ceiling whatif`: one measured run, one predicted change.
func runWhatIf(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("whatif", pflag.ContinueOnError)
	options := addAnalyzeFlags(fs)
	var ch analyze.WhatIfChange
	var ep bool
	fs.Float64Var(&ch.PromptTokens, "to-prompt-tokens", 0, "predict at this mean prompt length")
	fs.Float64Var(&ch.OutputTokens, "to-output-tokens", 0, "predict at this mean output length")
	fs.Int64Var(&ch.MaxModelLen, "to-max-model-len", 0, "predict at this max_model_len")
	fs.StringVar(&ch.KVDtype, "to-kv-dtype", "", "predict with this KV cache dtype (bf16, fp16, fp8)")
	fs.StringVar(&ch.WeightDtype, "to-weight-dtype", "", "predict with the weights in this precision (bf16, fp8, fp4, int4)")
	fs.Float64Var(&ch.PrefixTokens, "to-prefix-tokens", 0, "predict with this many tokens at the start of each prompt shared by the requests, held once per KV cache (engines with prefix caching: vLLM, SGLang)")
	fs.Float64Var(&ch.PrefixHitRate, "to-prefix-hit-rate", 0, "instead of --to-prefix-tokens: the share of each prompt served from the prefix cache")
	fs.StringVar(&ch.GPU, "to-gpu", "", "predict on this catalog GPU")
	fs.IntVar(&ch.GPUs, "to-gpus", 0, "predict with this many GPUs")
	fs.IntVar(&ch.TP, "to-tp", 0, "predict at this tensor-parallel size")
	fs.IntVar(&ch.DP, "to-dp", 0, "predict with this many data-parallel attention ranks")
	fs.IntVar(&ch.PP, "to-pp", 0, "predict with this many pipeline stages")
	fs.BoolVar(&ep, "to-ep", false, "predict with expert parallelism")
	pointsIn := fs.Float64("points-input-tokens", 0, "with published levels that do not give them: the mean prompt tokens they were measured at")
	pointsOut := fs.Float64("points-output-tokens", 0, "with published levels that do not give them: the mean output tokens they were measured at")
	format := fs.String("format", analysistext.FormatText, "output format: "+strings.Join(analysistext.Formats(), ", "))
	withAnalysis := fs.Bool("analysis", false, "also print the full analysis of the measured run after the what-if")
	h := help{name: "whatif", head: whatifHead, example: whatifExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return h.usageError(e, "give exactly one run")
	}
	if fs.Changed("to-ep") {
		ch.EP = &ep
	}
	if err := checkWhatIfChange(fs, ch); err != nil {
		return h.usageError(e, err.Error())
	}
	opt, err := options()
	if err != nil {
		return h.usageError(e, err.Error())
	}
	if (opt.ModelConfig == "" || opt.GPU == "") && !(ch.KVOnly() && opt.ModelConfig == "") {
		return h.usageError(e, "--model-config and --gpu (the measured deployment) are required (a change of request lengths or max_model_len alone works without them, from the server's declared KV capacity)")
	}
	// One deployment for the analysis and the what-if (config.json parsed once).
	if err := opt.Prepare(); err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: analyzing %s: %v\n", fs.Arg(0), flagError(err))
		return exitFailed
	}
	if pts, err := readSummaryPoints(fs.Arg(0)); err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: %s\n", errText(flagError(err)))
		return exitFailed
	} else if pts != nil {
		if err := fillPointLengths(fs, pts, *pointsIn, *pointsOut); err != nil {
			return h.usageError(e, err.Error())
		}
		if *withAnalysis {
			return h.usageError(e, "--analysis needs a recorded run: "+fs.Arg(0)+" holds published summary points")
		}
		res, err := analyze.WhatIfFromSummary(pts, opt, ch)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling whatif: %s: %v\n", fs.Arg(0), flagError(err))
			return exitFailed
		}
		if len(res.Levels) == 0 && (pts.Points[0].InputTokens == nil || pts.Points[0].OutputTokens == nil) {
			res.Notes = append(res.Notes, fs.Arg(0)+" gives no request lengths: give them with --points-input-tokens and --points-output-tokens to predict each level")
		}
		return writeWhatIfResults(e, []*analyze.WhatIfResult{res}, nil, *format)
	}
	if fs.Changed("points-input-tokens") || fs.Changed("points-output-tokens") {
		return h.usageError(e, "--points-input-tokens and --points-output-tokens describe published levels; "+fs.Arg(0)+" is a recorded run, whose lengths are measured")
	}
	a, err := analyzeInputs(ctx, fs.Args(), opt, e.stderr)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: %v\n", flagError(err))
		return exitFailed
	}
	var results []*analyze.WhatIfResult
	for i := range a.Runs {
		res, err := analyze.WhatIf(&a.Runs[i], opt, ch)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling whatif: %v\n", flagError(err))
			return exitFailed
		}
		results = append(results, res)
	}
	var full *analyze.Analysis
	if *withAnalysis {
		full = a
	}
	return writeWhatIfResults(e, results, full, *format)
}

// writeWhatIfResults prints the what-if (and the analysis, when given) whole, or
// nothing.
func writeWhatIfResults(e env, results []*analyze.WhatIfResult, full *analyze.Analysis, format string) int {
	var buf bytes.Buffer
	if err := analysistext.WriteWhatIf(&buf, results, full, format); err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: %s\n", errText(err))
		return exitFailed
	}
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return exitFailed
	}
	return exitOK
}
