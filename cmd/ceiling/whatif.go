package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/spf13/pflag"
)

const whatifHead = `Usage: ceiling whatif RUN [flags] [changes]

Analyzes one recorded run like 'ceiling analyze' (same flags: the model config and the
GPU of the measured deployment are required) and predicts it under a change: other
request lengths, max_model_len, KV dtype, GPU count or shape, or another catalog GPU.
One table, the measured row beside the PREDICTED one. The measured batch limit and
knee carry over only where the shape and GPU are unchanged; the measured share of the
roofline at the ceiling scales the predicted throughput.

`

const whatifExample = `Example:
  ceiling whatif run.parquet --model-config samples/models/llama-3.1-8b.json --gpu h100-sxm \
      --to-kv-dtype fp8 --to-prompt-tokens 8000
  ceiling whatif run.parquet --model-config kimi.json --gpu rtx-pro-6000 --gpus 8 --tp 8 \
      --weights-gib 70.8 --to-dp 2 --to-tp 4 --to-ep
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
	fs.StringVar(&ch.GPU, "to-gpu", "", "predict on this catalog GPU")
	fs.IntVar(&ch.GPUs, "to-gpus", 0, "predict with this many GPUs")
	fs.IntVar(&ch.TP, "to-tp", 0, "predict at this tensor-parallel size")
	fs.IntVar(&ch.DP, "to-dp", 0, "predict with this many data-parallel attention ranks")
	fs.IntVar(&ch.PP, "to-pp", 0, "predict with this many pipeline stages")
	fs.BoolVar(&ep, "to-ep", false, "predict with expert parallelism")
	format := fs.String("format", analyze.FormatText, "output format: "+strings.Join(analyze.Formats(), ", "))
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
	opt, err := options()
	if err != nil {
		return h.usageError(e, err.Error())
	}
	if opt.ModelConfig == "" || opt.GPU == "" {
		return h.usageError(e, "--model-config and --gpu (the measured deployment) are required")
	}
	// One deployment for the analysis and the what-if (config.json parsed once).
	if err := opt.Prepare(); err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: analyzing %s: %v\n", fs.Arg(0), flagError(err))
		return exitFailed
	}
	a, err := analyzeInputs(ctx, fs.Args(), opt)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: %v\n", flagError(err))
		return exitFailed
	}
	for i := range a.Runs {
		r := &a.Runs[i]
		rows, err := analyze.WhatIf(r, opt, ch)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling whatif: %v\n", flagError(err))
			return exitFailed
		}
		if r.Decision != nil {
			r.Decision.WhatIf = rows
		}
	}
	var buf bytes.Buffer
	if err := analyze.Write(&buf, a, *format); err != nil {
		fmt.Fprintf(e.stderr, "ceiling whatif: %v\n", err)
		return exitFailed
	}
	if _, err := e.stdout.Write(buf.Bytes()); err != nil {
		return exitFailed
	}
	return exitOK
}
