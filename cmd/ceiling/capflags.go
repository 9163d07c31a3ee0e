package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/spf13/pflag"
)

// capacityFlags are the deployment and capacity-model flags, defined here once for
// plan, analyze, report and record so that a flag means the same in every subcommand.
type capacityFlags struct {
	fs *pflag.FlagSet // to tell a flag given as 0 from one left at its default

	modelConfig string
	gpu         string
	gpus, tp    int
	dp, pp      int
	ep          bool

	memGiB     float64
	util       float64
	weightsGiB float64
	reserveGiB float64
	// The modelled reserve's engine and batch limits (capacity.ReserveInput).
	engine           string
	maxBatchedTokens int
	maxSeqs          int
	kvDtype          string
	weightDtype      string
	paramsB          float64
	maxModelLen      int64
}

// addDeployment registers what describes the deployment: the model's config.json,
// the GPU, the GPU count and the shape (TP, DP, PP, EP; see capacity.Shape). record
// stores them as declared.
func (c *capacityFlags) addDeployment(fs *pflag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.modelConfig, "model-config", "", "Hugging Face config.json of the served model, for the KV capacity model")
	fs.StringVar(&c.gpu, "gpu", "", "GPU model from the catalog: "+strings.Join(capacity.GPUNames(), ", "))
	fs.IntVar(&c.gpus, "gpus", 0, "GPUs in the deployment = tp × dp × pp × replicas (default: one engine, tp × dp × pp)")
	fs.IntVar(&c.tp, "tp", 0, "tensor-parallel size (default: --gpus ÷ (dp × pp), i.e. one engine over every GPU)")
	fs.IntVar(&c.dp, "dp", 1, "data-parallel attention ranks per engine, each with its own KV cache (vLLM --data-parallel-size, SGLang --dp-size)")
	fs.IntVar(&c.pp, "pp", 1, "pipeline-parallel stages per engine: layers, and the KV cache with them, split over them")
	fs.BoolVar(&c.ep, "ep", false, "expert parallelism: routed experts sharded over the dp × tp GPUs (vLLM --enable-expert-parallel)")
}

// addBudget registers the inputs of the memory budget and of the concurrency figures.
func (c *capacityFlags) addBudget(fs *pflag.FlagSet) {
	fs.Float64Var(&c.memGiB, "gpu-memory-gib", 0, "memory per GPU in GiB, overriding the catalog (or for a GPU not in it)")
	fs.Float64Var(&c.util, "gpu-util", capacity.DefaultUtilization, "fraction of GPU memory the server may use (vLLM --gpu-memory-utilization)")
	fs.Float64Var(&c.weightsGiB, "weights-gib", 0, "weights per GPU in GiB, as the server logs them (default: estimated from the config)")
	fs.Float64Var(&c.reserveGiB, "reserve-gib", 0, "a flat activation/overhead reserve per GPU in GiB (default: modelled from vLLM's batch limits, CUDA graphs and NCCL buffers; see docs/capacity.md)")
	fs.StringVar(&c.engine, "engine", capacity.EngineVLLM, "the engine the modelled reserve is for: vllm (V1), vllm-v0, sglang (then --gpu-util is --mem-fraction-static); analyze and report default to the run's engine")
	fs.IntVar(&c.maxBatchedTokens, "max-num-batched-tokens", 0, "the engine's max_num_batched_tokens, for the modelled reserve (default: vLLM's for the GPU, 8192 or 2048)")
	fs.IntVar(&c.maxSeqs, "max-num-seqs", 0, "the engine's max_num_seqs, for the modelled reserve (default: vLLM's for the GPU, 1024 or 256)")
	fs.StringVar(&c.kvDtype, "kv-dtype", "auto", "KV cache dtype: auto (the model's dtype), bf16, fp16, fp8, fp32")
	fs.StringVar(&c.weightDtype, "weight-dtype", "", "weight precision for the estimate: bf16, fp8, fp4, int4 (default: from the config)")
	fs.Float64Var(&c.paramsB, "params-b", 0, "parameter count in billions for the estimate (default: counted from the config)")
	fs.Int64Var(&c.maxModelLen, "max-model-len", 0, "context length the server runs with, for 'concurrency at max_model_len' (default: what the server reveals, else the config's max_position_embeddings)")
}

// maxGPUs bounds --gpus and --tp; capacity.BudgetInput.Check has the same bound.
const maxGPUs = 1 << 16

// givenZero reports whether the flag name was given explicitly as 0, where 0 is
// only the flag's "not given" default: silently replacing it would run something
// the user did not ask for.
func (c *capacityFlags) givenZero(name string, v float64) bool {
	return c.fs != nil && c.fs.Changed(name) && v == 0
}

// checkDeployment validates the deployment flags; its messages name the flags.
func (c *capacityFlags) checkDeployment() error {
	switch {
	case c.givenZero("gpus", float64(c.gpus)):
		return errors.New("--gpus 0: give the number of GPUs, at least 1 (omit the flag for the default: --tp, else 1)")
	case c.givenZero("tp", float64(c.tp)):
		return errors.New("--tp 0: give the tensor-parallel size, at least 1 (omit the flag for the default: --gpus)")
	case c.gpus < 0:
		return fmt.Errorf("--gpus must not be negative, got %d", c.gpus)
	case c.tp < 0:
		return fmt.Errorf("--tp must not be negative, got %d", c.tp)
	case c.dp < 1:
		return fmt.Errorf("--dp must be at least 1, got %d", c.dp)
	case c.pp < 1:
		return fmt.Errorf("--pp must be at least 1, got %d", c.pp)
	case c.gpus > maxGPUs:
		return fmt.Errorf("--gpus %d is out of range (at most %d)", c.gpus, maxGPUs)
	case c.tp > maxGPUs || c.dp > maxGPUs || c.pp > maxGPUs:
		return fmt.Errorf("--tp, --dp and --pp are at most %d", maxGPUs)
	case c.gpus > 0 && c.tp > c.gpus:
		return fmt.Errorf("--tp %d is larger than --gpus %d", c.tp, c.gpus)
	case c.gpus > 0 && max(c.tp, 1)*c.dp*c.pp > c.gpus:
		return fmt.Errorf("--tp × --dp × --pp = %d is larger than --gpus %d", max(c.tp, 1)*c.dp*c.pp, c.gpus)
	case c.gpus > 0 && c.tp > 0 && c.dp == 1 && c.pp == 1 && c.gpus%c.tp != 0:
		return fmt.Errorf("--gpus %d is not a multiple of --tp %d: each replica runs on --tp GPUs", c.gpus, c.tp)
	case c.gpus > 0 && c.gpus%(max(c.tp, 1)*c.dp*c.pp) != 0:
		return fmt.Errorf("--gpus %d is not a multiple of --tp × --dp × --pp = %d: each replica runs on that many GPUs", c.gpus, max(c.tp, 1)*c.dp*c.pp)
	}
	if c.gpu != "" {
		if _, err := capacity.LookupGPU(c.gpu); err != nil {
			msg := fmt.Sprintf("--gpu %q is not in the catalog (%s)", c.gpu, strings.Join(capacity.GPUNames(), ", "))
			if c.fs != nil && c.fs.Lookup("gpu-memory-gib") != nil {
				msg += "; for another GPU give --gpu-memory-gib instead"
			}
			return errors.New(msg)
		}
	}
	return nil
}

// check validates every capacity flag; its messages name the flags.
func (c *capacityFlags) check() error {
	if err := c.checkDeployment(); err != nil {
		return err
	}
	if !(c.util > 0 && c.util <= 1) { // NaN too
		return fmt.Errorf("--gpu-util must be in (0, 1], got %g", c.util)
	}
	for _, f := range []struct {
		name, omit string
		v          float64
	}{
		{"gpu-memory-gib", "the catalog's memory of --gpu", c.memGiB},
		{"weights-gib", "an estimate from the config", c.weightsGiB},
		{"params-b", "the count from the config", c.paramsB},
		{"max-model-len", "what the server reveals, else the config's", float64(c.maxModelLen)},
	} {
		if c.givenZero(f.name, f.v) {
			return fmt.Errorf("--%s 0: give a positive value (omit the flag for %s)", f.name, f.omit)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"--gpu-memory-gib", c.memGiB}, {"--weights-gib", c.weightsGiB}, {"--reserve-gib", c.reserveGiB},
		{"--params-b", c.paramsB}, {"--max-model-len", float64(c.maxModelLen)}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("%s must be a number, got %g", f.name, f.v)
		}
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative, got %g", f.name, f.v)
		}
	}
	if c.fs != nil && c.fs.Changed("reserve-gib") {
		for _, f := range []string{"engine", "max-num-batched-tokens", "max-num-seqs"} {
			if c.fs.Changed(f) {
				return fmt.Errorf("--%s sets the modelled reserve, --reserve-gib a flat one: give one or the other", f)
			}
		}
	}
	if err := (capacity.ReserveInput{Engine: c.engine, MaxBatchedTokens: c.maxBatchedTokens, MaxSeqs: c.maxSeqs}).Check(); err != nil {
		return flagError(err)
	}
	if c.maxModelLen > capacity.MaxContextTokens {
		return fmt.Errorf("--max-model-len %d is out of range (at most %d tokens)", c.maxModelLen, int64(capacity.MaxContextTokens))
	}
	if !strings.EqualFold(strings.TrimSpace(c.kvDtype), "auto") {
		if _, err := capacity.NormalizeDtype(c.kvDtype); err != nil {
			return fmt.Errorf("--kv-dtype: %w", err)
		}
	}
	// The plausible maxima are capacity's.
	return flagError(c.budgetInput().Check())
}

// budgetInput is the hardware side of the capacity model. TP and GPUs stay as given:
// capacity.BudgetInput.Deployment applies the defaults the flags document.
func (c *capacityFlags) budgetInput() capacity.BudgetInput {
	in := capacity.BudgetInput{
		GPU: c.gpu, MemoryGiB: c.memGiB, Utilization: c.util, WeightsGiB: c.weightsGiB, ReserveGiB: c.reserveGiB,
		GPUs: c.gpus, TP: c.tp, DP: c.dp, PP: c.pp, EP: c.ep, KVDtype: c.kvDtype, WeightDtype: c.weightDtype, ParamsB: c.paramsB,
	}
	// The modelled reserve is the headline; a flat figure only when asked for.
	if c.fs == nil || !c.fs.Changed("reserve-gib") {
		in.Reserve = &capacity.ReserveInput{Engine: c.engine, MaxBatchedTokens: c.maxBatchedTokens, MaxSeqs: c.maxSeqs}
		if c.fs != nil && !c.fs.Changed("engine") {
			// No engine chosen: plan models vLLM V1 (""), analyze the run's engine.
			in.Reserve.Engine = ""
		}
	}
	return in
}

// declared is the deployment as record stores it: with the same defaults as the other
// subcommands (--gpus 8 alone is TP 8), and nothing when nothing was given.
func (c *capacityFlags) declared() (gpus, tp int) {
	if c.gpus == 0 && c.tp == 0 && c.dp <= 1 && c.pp <= 1 {
		return 0, 0
	}
	return capacity.BudgetInput{GPUs: c.gpus, TP: c.tp, DP: c.dp, PP: c.pp}.Deployment()
}

// budgetFlags maps the capacity package's field names, which its errors use, to the
// flags that set them. Longer names first: GPUs before GPU.
func budgetFlags() *strings.Replacer {
	return strings.NewReplacer(
		"BudgetInput.GPUs", "--gpus",
		"BudgetInput.GPU", "--gpu",
		"BudgetInput.TP", "--tp",
		"BudgetInput.DP", "--dp",
		"BudgetInput.PP", "--pp",
		"BudgetInput.MemoryGiB", "--gpu-memory-gib",
		"BudgetInput.Utilization", "--gpu-util",
		"BudgetInput.WeightsGiB", "--weights-gib",
		"BudgetInput.ReserveGiB", "--reserve-gib",
		"ReserveInput.Engine", "--engine",
		"ReserveInput.MaxBatchedTokens", "--max-num-batched-tokens",
		"ReserveInput.MaxSeqs", "--max-num-seqs",
		"BudgetInput.KVDtype", "--kv-dtype",
		"BudgetInput.WeightDtype", "--weight-dtype",
		"BudgetInput.ParamsB", "--params-b",
		"Options.ModelConfig", "--model-config",
	)
}

// flagError rewrites a library error so that it names the flags the user typed.
func flagError(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(budgetFlags().Replace(err.Error()))
}
