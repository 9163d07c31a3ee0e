package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/spf13/pflag"
)

// addAnalyzeFlags registers the flags that analyze and report share (SLOs, capacity
// model, hardware) and returns a function that turns them into analyze.Options after
// parsing.
func addAnalyzeFlags(fs *pflag.FlagSet) func() (analyze.Options, error) {
	sloTTFT := fs.Duration("slo-ttft", 0, "latency target for time to first token, e.g. 2s (0 = none)")
	sloTPOT := fs.Duration("slo-tpot", 0, "latency target for time per output token, e.g. 50ms (0 = none)")
	sloE2E := fs.Duration("slo-e2e", 0, "latency target for the whole request, e.g. 30s (0 = none)")
	modelConfig := fs.String("model-config", "", "Hugging Face config.json of the served model, for the KV capacity model")
	gpu := fs.String("gpu", "", "GPU model from the built-in catalog, e.g. h100-sxm, rtx-pro-6000")
	gpus := fs.Int("gpus", 0, "GPUs in the deployment")
	tp := fs.Int("tp", 0, "tensor-parallel size (0 = --gpus)")
	memGiB := fs.Float64("gpu-memory-gib", 0, "memory per GPU in GiB, overriding the catalog")
	util := fs.Float64("gpu-util", capacity.DefaultUtilization, "fraction of GPU memory the server may use (vLLM --gpu-memory-utilization)")
	weightsGiB := fs.Float64("weights-gib", 0, "model weights per GPU in GiB (0 = estimate from the config)")
	reserveGiB := fs.Float64("reserve-gib", -1, fmt.Sprintf("activation/overhead reserve per GPU in GiB (-1 = %g)", capacity.DefaultReserveGiB))
	kvDtype := fs.String("kv-dtype", "auto", "KV cache dtype: auto, bf16, fp16, fp8")
	weightDtype := fs.String("weight-dtype", "", "weight precision for the weight estimate, e.g. bf16, fp8, nvfp4 (\"\" = from the config)")
	paramsB := fs.Float64("params-b", 0, "parameter count in billions for the weight estimate (0 = from the config)")
	maxModelLen := fs.Int64("max-model-len", 0, "context length for 'concurrency at max_model_len' when the server did not reveal it")
	timelineLevel := fs.Int("timeline-level", -1, "level drawn on the per-request timeline (-1 = the level nearest the ceiling)")

	return func() (analyze.Options, error) {
		opt := analyze.Options{
			ModelConfig: *modelConfig,
			BudgetInput: capacity.BudgetInput{
				GPU: *gpu, GPUs: *gpus, TP: *tp,
				MemoryGiB: *memGiB, Utilization: *util, WeightsGiB: *weightsGiB, ReserveGiB: *reserveGiB,
				KVDtype: strings.ToLower(*kvDtype), WeightDtype: *weightDtype, ParamsB: *paramsB,
			},
			MaxModelLen: *maxModelLen, TimelineLevel: *timelineLevel,
		}
		for _, d := range []struct {
			name string
			v    time.Duration
			dst  **float64
		}{{"--slo-ttft", *sloTTFT, &opt.SLO.TTFT}, {"--slo-tpot", *sloTPOT, &opt.SLO.TPOT}, {"--slo-e2e", *sloE2E, &opt.SLO.E2E}} {
			if d.v < 0 {
				return opt, fmt.Errorf("%s must not be negative, got %s", d.name, d.v)
			}
			if d.v > 0 {
				s := d.v.Seconds()
				*d.dst = &s
			}
		}
		switch {
		case *util <= 0 || *util > 1:
			return opt, fmt.Errorf("--gpu-util must be in (0, 1], got %g", *util)
		case *gpus < 0:
			return opt, fmt.Errorf("--gpus must not be negative, got %d", *gpus)
		case *tp < 0:
			return opt, fmt.Errorf("--tp must not be negative, got %d", *tp)
		case *gpus > 0 && *tp > *gpus:
			return opt, fmt.Errorf("--tp %d is larger than --gpus %d", *tp, *gpus)
		case *memGiB < 0 || *weightsGiB < 0 || *paramsB < 0 || *maxModelLen < 0:
			return opt, fmt.Errorf("--gpu-memory-gib, --weights-gib, --params-b and --max-model-len must not be negative")
		case *timelineLevel < -1:
			return opt, fmt.Errorf("--timeline-level must be a level index or -1, got %d", *timelineLevel)
		}
		switch opt.KVDtype {
		case "auto", "bf16", "fp16", "fp8":
		default:
			return opt, fmt.Errorf("--kv-dtype must be auto, bf16, fp16 or fp8, got %q", *kvDtype)
		}
		return opt, nil
	}
}
