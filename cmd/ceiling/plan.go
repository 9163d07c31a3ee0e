package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/internal/numfmt"
	"github.com/spf13/pflag"
)

const planExample = `Example:
  ceiling plan --model-config samples/models/kimi-k2.5.json --gpu rtx-pro-6000 \
      --gpus 8 --tp 8 --weights-gib 70.8 --prompt-tokens 2000 --output-tokens 1000

  ceiling plan --model-config samples/models/kimi-k2.5.json --gpu rtx-pro-6000 \
      --gpus 8 --tp 8 --weights-gib 70.8 --prompt-tokens 2000 --output-tokens 1000 \
      --compare-shapes --levels 1,2,4,8,16,32,64,128,256,512,1024

Prints the memory budget per GPU step by step (memory × utilization − weights −
reserve), the KV bytes per token and the tokens that fit, how many requests the KV
cache holds at max_model_len and at the workload's length, and proposes sweep levels
that bracket that prediction (geometric, up to about twice it). An alarm, with its
fixes, when max_model_len does not fit once in a KV cache. Then each level of the
sweep (proposed, or --levels) against the KV budget and the predicted roofline
(per-user and total tok/s at the batch that fits; see docs/capacity.md).
--compare-shapes puts TP, DP-attention and EP shapes of the same GPUs side by side.
`

// runPlan prints the KV/memory budget of a deployment and proposes sweep levels, before
// anything is recorded.
func runPlan(ctx context.Context, e env, args []string) int {
	fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	var cf capacityFlags
	cf.addDeployment(fs)
	cf.addBudget(fs)
	promptTokens := fs.Int("prompt-tokens", 1024, "prompt tokens per request of the workload")
	outputTokens := fs.Int("output-tokens", 512, "output tokens per request of the workload")
	compareShapes := fs.Bool("compare-shapes", false, "print every DP × TP shape of the same GPUs side by side (KV capacity, concurrency)")
	hostKV := fs.Float64("host-kv-gib", 0, "host memory of a KV offload tier per serving engine (vLLM CPU offloading, LMCache, SGLang HiCache), GiB: the KV ceiling with and without it, as a prediction")
	prefixTokens := fs.Int("prefix-tokens", 0, "tokens at the start of each prompt that the requests share (a system prompt, documents): an engine with prefix caching (vLLM, SGLang; not llama.cpp) holds them once per KV cache, in full blocks of 16")
	prefixHitRate := fs.Float64("prefix-hit-rate", 0, "instead of --prefix-tokens: the share of prompt tokens served from the prefix cache; the shared prefix is that share of --prompt-tokens")
	prefixes := fs.Int("prefixes", 1, "distinct shared prefixes, each held once per KV cache (with --prefix-tokens or --prefix-hit-rate)")
	levelsFlag := fs.String("levels", "", "the sweep you intend, e.g. 1,2,4,...,1024: each level against the KV budget and the roofline (default: the proposed sweep)")
	h := help{name: "plan", head: "Usage: ceiling plan --model-config config.json (--gpu NAME | --gpu-memory-gib N) [flags]\n\n" +
		"Prints the KV-cache and memory budget of one GPU step by step and proposes sweep levels\n" +
		"that bracket the predicted ceiling, before anything is recorded.\n",
		example: planExample}
	if code, ok := h.parse(e, fs, args); !ok {
		return code
	}
	usageErr := func(msg string) int { return h.usageError(e, msg) }
	switch {
	case fs.NArg() > 0:
		return usageErr(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case cf.modelConfig == "":
		return usageErr("--model-config is required")
	case cf.gpu == "" && cf.memGiB <= 0:
		return usageErr("give --gpu NAME (" + strings.Join(capacity.GPUNames(), ", ") + ") or --gpu-memory-gib")
	case *promptTokens < 1 || int64(*promptTokens) > capacity.MaxContextTokens:
		return usageErr(fmt.Sprintf("--prompt-tokens must be from 1 to %d, got %d", int64(capacity.MaxContextTokens), *promptTokens))
	case *outputTokens < 1 || int64(*outputTokens) > capacity.MaxContextTokens:
		return usageErr(fmt.Sprintf("--output-tokens must be from 1 to %d, got %d", int64(capacity.MaxContextTokens), *outputTokens))
	case *hostKV < 0 || math.IsNaN(*hostKV) || math.IsInf(*hostKV, 0) || *hostKV > maxHostKVGiB:
		return usageErr(fmt.Sprintf("--host-kv-gib must be from 0 to %d GiB, got %g", maxHostKVGiB, *hostKV))
	case *prefixTokens < 0 || *prefixTokens >= *promptTokens:
		return usageErr(fmt.Sprintf("--prefix-tokens must be from 0 to below --prompt-tokens (%d), got %d", *promptTokens, *prefixTokens))
	case !(*prefixHitRate >= 0 && *prefixHitRate < 1):
		return usageErr(fmt.Sprintf("--prefix-hit-rate must be from 0 to below 1, got %v", *prefixHitRate))
	case *prefixTokens > 0 && *prefixHitRate > 0:
		return usageErr("give --prefix-tokens or --prefix-hit-rate, not both")
	case *prefixes < 1:
		return usageErr(fmt.Sprintf("--prefixes must be at least 1, got %d", *prefixes))
	}
	shared := capacity.SharedPrefix{Tokens: float64(*prefixTokens), Prefixes: *prefixes, BlockTokens: capacity.DefaultPrefixBlock}
	if *prefixHitRate > 0 {
		shared.Tokens = math.Floor(*prefixHitRate * float64(*promptTokens))
	}
	if err := cf.check(); err != nil {
		return usageErr(err.Error())
	}
	var levels []int
	if *levelsFlag != "" {
		l, err := parseLevels(*levelsFlag)
		if err != nil {
			return usageErr(err.Error())
		}
		levels = l
	}
	dep, err := capacity.NewDeployment(cf.modelConfig, cf.budgetInput())
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling plan: %s\n", errText(err))
		return exitFailed
	}
	cfg := dep.Config
	p, err := dep.Plan, dep.PlanErr
	if p != nil && err != nil {
		// The budget is negative: show how it came about, then the error.
		writePlanBudget(e.stdout, p)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling plan: %v\n", flagError(err))
		return exitFailed
	}
	mml := cf.maxModelLen
	if mml == 0 {
		mml = cfg.MaxModelLen
	}
	writePlan(e.stdout, p, cf.modelConfig, mml, *promptTokens, *outputTokens, shared)
	writeMaxModelLenAlarm(e.stdout, p, mml)
	if *hostKV > 0 {
		writeHostTier(e.stdout, p, *hostKV, *promptTokens, *outputTokens, shared)
	}
	if *compareShapes {
		writeCompareShapes(e.stdout, p, mml, *promptTokens+*outputTokens)
	}
	r, rerr := dep.Roofline, dep.RooflineErr
	if rerr != nil {
		r = nil
	}
	proposed := levels == nil
	if proposed {
		c, _ := p.ConcurrencyShared(float64(*promptTokens+*outputTokens), shared)
		levels = capacity.ProposeLevels(c)
	}
	writeLevels(e.stdout, p, r, levels, *promptTokens, *outputTokens, proposed, shared)
	if rerr != nil {
		fmt.Fprintf(e.stdout, "No roofline: %v\n", flagError(rerr))
	}
	return exitOK
}

func gibs(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/float64(1<<30)) }

// commas writes n with thousands separators.
func commas(n int64) string { return numfmt.Int(n) }

func writePlan(w io.Writer, p *capacity.PlanResult, path string, maxModelLen int64, prompt, output int, shared capacity.SharedPrefix) {
	c, kv := p.Config, p.KV
	fmt.Fprintf(w, "Model         %s (%s, %d layers)\n", path, c.ModelType, c.Layers)
	fmt.Fprintf(w, "KV per token  %s bytes per GPU\n", commas(kv.BytesPerToken()))
	for _, d := range kv.Derivation {
		fmt.Fprintf(w, "              %s\n", d)
	}
	if p.GPU != nil {
		g := p.GPU
		fmt.Fprintf(w, "GPU           %s: %s, %s, %.2f TB/s, %s\n", g.Name, g.Full, gibs(g.MemoryBytes), g.BandwidthBytesS/1e12, g.Interconnect)
	}
	s := p.Shape
	switch {
	case s.DP == 1 && s.PP == 1 && s.Replicas == 1:
		fmt.Fprintf(w, "Deployment    %s at TP %d: one serving engine\n\n", plural(p.Budget.GPUs, "GPU"), p.Budget.TP)
	case s.DP == 1 && s.PP == 1:
		fmt.Fprintf(w, "Deployment    %s at TP %d: %d replicas, each with its own KV cache\n\n", plural(p.Budget.GPUs, "GPU"), p.Budget.TP, p.Replicas)
	default:
		fmt.Fprintf(w, "Deployment    %s as %s: %s in all\n\n", plural(p.Budget.GPUs, "GPU"), s, plural(s.KVCaches(), "KV cache"))
	}
	writePlanBudget(w, p)

	fmt.Fprintf(w, "\nConcurrency the KV cache holds (requests at once, all replicas)\n")
	if maxModelLen > 0 {
		fmt.Fprintf(w, "  %-50s%8.2f\n", fmt.Sprintf("at max_model_len %s tokens", commas(maxModelLen)), p.Concurrency(float64(maxModelLen)))
	}
	tokens := prompt + output
	label := fmt.Sprintf("at %s tokens (%s prompt + %s output)", commas(int64(tokens)), commas(int64(prompt)), commas(int64(output)))
	ceiling := p.Concurrency(float64(tokens))
	fmt.Fprintf(w, "  %-50s%8.2f\n", label, ceiling)
	unshared := ceiling
	if c, ok := p.ConcurrencyShared(float64(tokens), shared); ok {
		ceiling = c
		fmt.Fprintf(w, "  %-50s%8.2f\n", fmt.Sprintf("with %s shared prefix tokens counted once", commas(int64(shared.Counted()))), ceiling)
	} else if shared.Tokens > 0 {
		fmt.Fprintf(w, "  (the %s shared prefix tokens share nothing: no full block of %d, or the prefixes fill the cache)\n", commas(int64(shared.Tokens)), shared.BlockTokens)
	}

	levels := capacity.ProposeLevels(ceiling)
	fmt.Fprintln(w)
	if ceiling < 1 {
		fmt.Fprintf(w, "Predicted ceiling: the KV cache does not hold one request of %s tokens; shorten the requests or add memory.\n", commas(int64(tokens)))
	} else {
		fmt.Fprintf(w, "Predicted KV ceiling: about %.0f concurrent requests of %s tokens (the server's batch limit, the\n", math.Floor(ceiling), commas(int64(tokens)))
		fmt.Fprintf(w, "throughput knee or the SLOs may bind earlier; beyond it levels measure queueing, not serving).\n")
		if ceiling != unshared {
			fmt.Fprintf(w, "Shared prefixes counted once: %s of each request's tokens are %s held once per KV cache by an\n", commas(int64(shared.Counted())), plural(max(shared.Prefixes, 1), "prefix"))
			fmt.Fprintf(w, "engine with prefix caching (vLLM, SGLang; blocks of %d), so about %.0f instead of %.0f; llama.cpp holds a copy per slot.\n", shared.BlockTokens, math.Floor(ceiling), math.Floor(unshared))
		}
		fmt.Fprintf(w, "The sweep below brackets it, up to about twice it.\n")
	}
	strs := make([]string, len(levels))
	for i, l := range levels {
		strs[i] = strconv.Itoa(l)
	}
	fmt.Fprintf(w, "Proposed sweep: --concurrency %s\n", strings.Join(strs, ","))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// reserveNote says what decides the KV budget's range.
func reserveNote(r capacity.ReserveRange) string {
	return fmt.Sprintf("(the reserve decides it: %s flat, %s modelled from %s; the KV budget moves by %.0f%%)",
		strings.TrimSpace(gibs(r.FlatReserveBytes)), strings.TrimSpace(gibs(r.ModelledBytes)), r.Assumption, r.MovesPercent())
}

// reserveHow says where the reserve row's figure comes from.
func reserveHow(b capacity.Budget) string {
	if m := b.ReserveModel; m != nil {
		return fmt.Sprintf("(modelled: %s activations + %s logits + %s non-torch + %s CUDA graphs; %s; --reserve-gib for a flat figure)",
			strings.TrimSpace(gibs(m.ActivationBytes)), strings.TrimSpace(gibs(m.LogitsBytes)), strings.TrimSpace(gibs(m.NonTorchBytes)), strings.TrimSpace(gibs(m.CUDAGraphBytes)), m.Assumption)
	}
	return "(flat, as given by --reserve-gib)"
}

// writePlanBudget prints the memory budget per GPU, one step a line.
func writePlanBudget(w io.Writer, p *capacity.PlanResult) {
	b := p.Budget
	capped := b.MemoryBytes - b.UnusableBytes
	row := func(label, value, note string) {
		line := fmt.Sprintf("  %-36s%12s", label, value)
		if note != "" {
			line += "   " + note
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "Memory budget per GPU")
	row("GPU memory", gibs(b.MemoryBytes), "")
	row(fmt.Sprintf("× utilization %.2f", b.Utilization), gibs(capped), fmt.Sprintf("(%s left to the driver and other processes)", gibs(b.UnusableBytes)))
	row("− weights", gibs(b.WeightsBytes), "("+p.WeightsHow+")")
	row("− activation/overhead reserve", gibs(b.ReserveBytes), reserveHow(b))
	row("= KV cache budget", gibs(b.KVBudgetBytes), "")
	if r, ok := capacity.KVBudgetRange(p); ok {
		row("  range, as the reserve goes", gibs(r.LowBytes)+"–"+strings.TrimSpace(gibs(r.HighBytes)), reserveNote(r))
	} else if alt, ok := capacity.ReserveAlternative(p); ok && b.KVBudgetBytes > 0 && float64(alt.HighBytes-alt.LowBytes) > 0.1*float64(alt.HighBytes) {
		// Too wide a range to show (over 2×): the other reserve's figure is named instead.
		other, how := alt.HighBytes, "a flat "+strings.TrimSpace(gibs(alt.FlatReserveBytes))+" reserve (--reserve-gib)"
		if other == b.KVBudgetBytes {
			other = alt.LowBytes
		}
		if b.ReserveModel == nil {
			how = "the modelled reserve (" + alt.Assumption + ")"
		}
		row("  with "+how, gibs(other), "(not the headline: the reserve alone moves the budget more than 2×)")
	}
	if bpt := p.KV.BytesPerToken(); bpt > 0 && b.KVBudgetBytes > 0 {
		row(fmt.Sprintf("÷ %s bytes per token", commas(bpt)), commas(p.KVTokens)+" tokens",
			fmt.Sprintf("(%s tokens per GiB, per replica)", commas(int64(math.Round(float64(1<<30)/float64(bpt))))))
	}
}
