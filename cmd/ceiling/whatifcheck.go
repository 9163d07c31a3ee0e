package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/spf13/pflag"
)

// checkWhatIfChange refuses a --to-* value that names no deployment or workload: a
// negative, zero, NaN or infinite length, a length beyond any context, a GPU count
// or parallel size outside 1..maxGPUs, an unknown dtype or GPU. Each message names
// the flag (exit 2, as plan's do); a value the user did not give is not checked.
func checkWhatIfChange(fs *pflag.FlagSet, ch analyze.WhatIfChange) error {
	maxCtx := float64(capacity.MaxContextTokens)
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{
		{"to-prompt-tokens", ch.PromptTokens, maxCtx},
		{"to-output-tokens", ch.OutputTokens, maxCtx},
		{"to-max-model-len", float64(ch.MaxModelLen), maxCtx},
		{"to-gpus", float64(ch.GPUs), maxGPUs},
		{"to-tp", float64(ch.TP), maxGPUs},
		{"to-dp", float64(ch.DP), maxGPUs},
		{"to-pp", float64(ch.PP), maxGPUs},
		{"to-prefix-tokens", ch.PrefixTokens, maxCtx},
	} {
		if !fs.Changed(f.name) {
			continue
		}
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 1 || f.v > f.max {
			return fmt.Errorf("--%s must be from 1 to %d, got %s", f.name, int64(f.max), fs.Lookup(f.name).Value)
		}
	}
	if fs.Changed("to-prefix-hit-rate") && !(ch.PrefixHitRate > 0 && ch.PrefixHitRate < 1) {
		return fmt.Errorf("--to-prefix-hit-rate must be above 0 and below 1, got %s", fs.Lookup("to-prefix-hit-rate").Value)
	}
	if fs.Changed("to-prefix-tokens") && fs.Changed("to-prefix-hit-rate") {
		return errors.New("give --to-prefix-tokens or --to-prefix-hit-rate, not both")
	}
	if fs.Changed("to-kv-dtype") {
		if _, err := capacity.NormalizeDtype(ch.KVDtype); err != nil {
			return fmt.Errorf("--to-kv-dtype: %w", err)
		}
	}
	if fs.Changed("to-weight-dtype") {
		// Weights also come in 4-bit formats a KV cache does not.
		if err := capacity.CheckWeightDtype(ch.WeightDtype); err != nil || ch.WeightDtype == "" {
			return fmt.Errorf("--to-weight-dtype: unknown weight dtype %q (want bf16, fp16, fp8, int8, fp4, nvfp4, mxfp4, int4)", ch.WeightDtype)
		}
	}
	if fs.Changed("to-gpu") {
		if _, err := capacity.LookupGPU(ch.GPU); err != nil {
			return fmt.Errorf("--to-gpu %q is not in the catalog (%s)", ch.GPU, strings.Join(capacity.GPUNames(), ", "))
		}
	}
	return nil
}
