package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
)

// The decision half of plan: the deployment shapes side by side, the max_model_len
// alarm with its fixes, each intended level against the KV budget, and the roofline.

// writeCompareShapes prints the shapes side by side: weights and KV per GPU, the
// caches, the concurrency each holds, and whether max_model_len fits one cache.
func writeCompareShapes(w io.Writer, p *capacity.PlanResult, maxModelLen int64, tokens int) {
	fmt.Fprintf(w, "\nDeployment shapes on the same %s (predicted; weights %s)\n", plural(p.Shape.GPUs(), "GPU"), shapeWeightsNote(p))
	fmt.Fprintf(w, "  %-22s %11s %11s %7s %14s %11s %12s %11s\n", "shape", "weights/GPU", "KV/GPU", "caches", "tokens/cache", "total KV", fmt.Sprintf("at %s", commas(int64(tokens))), "at max len")
	for _, s := range capacity.CandidateShapes(p) {
		q, err := capacity.Replan(p, func(in *capacity.BudgetInput) {
			in.TP, in.DP, in.PP, in.EP = s.TP, s.DP, s.PP, s.EP
			in.GPUs = s.GPUs()
		})
		if q == nil {
			fmt.Fprintf(w, "  %-22s %v\n", s, flagError(err))
			continue
		}
		if err != nil {
			fmt.Fprintf(w, "  %-22s %11s   does not fit: no memory left for the KV cache\n", s, gibs(q.Budget.WeightsBytes))
			continue
		}
		mml := "—"
		if maxModelLen > 0 {
			mml = fmt.Sprintf("%.2f/cache", q.FitsOnce(float64(maxModelLen)))
		}
		fmt.Fprintf(w, "  %-22s %11s %11s %7d %14s %11s %12.1f %11s\n", s, gibs(q.Budget.WeightsBytes), gibs(q.Budget.KVBudgetBytes),
			q.Shape.KVCaches(), commas(q.KVTokens), commas(q.KVTokens*int64(q.Shape.KVCaches())), q.Concurrency(float64(tokens)), mml)
	}
	if p.Config.Experts > 0 {
		fmt.Fprintln(w, "  DP rows use vLLM's layout (--data-parallel-size N --enable-expert-parallel): everything but the routed")
		fmt.Fprintln(w, "  experts is replicated on every DP rank. SGLang's --enable-dp-attention replicates only the attention and")
		fmt.Fprintln(w, "  needs less. A request lives in one cache: DP ranks add requests, not context.")
	}
}

func shapeWeightsNote(p *capacity.PlanResult) string {
	if p.Input.WeightsGiB > 0 && p.Weights != nil {
		return fmt.Sprintf("scaled from the %.1f GiB given for %s", p.Input.WeightsGiB, p.Shape)
	}
	if p.Input.WeightsGiB > 0 {
		return "as given, for every shape"
	}
	return "estimated from the config"
}

// writeMaxModelLenAlarm says when max_model_len does not fit even once in one KV
// cache, and what each fix would give (capacity.MaxModelLenFixes).
func writeMaxModelLenAlarm(w io.Writer, p *capacity.PlanResult, maxModelLen int64) {
	fits, fixes, ok := capacity.MaxModelLenFixes(p, maxModelLen)
	if !ok {
		return
	}
	fmt.Fprintf(w, "\nALARM: max_model_len %s does not fit once in a KV cache (%.2f requests). vLLM refuses to start\n", commas(maxModelLen), fits)
	fmt.Fprintf(w, "(\"max_model_len is larger than the maximum number of tokens that can be stored in KV cache\");\n")
	fmt.Fprintf(w, "engines that start anyway preempt a full-length request constantly. Fixes, and the requests of\n")
	fmt.Fprintf(w, "max_model_len tokens one cache then holds (predicted):\n")
	row := func(fix string, v float64, note string) {
		fmt.Fprintf(w, "  %-58s %8s   %s\n", fix, fmt.Sprintf("%.2f", v), note)
	}
	for _, f := range fixes {
		switch f.Kind {
		case "cap":
			fmt.Fprintf(w, "  %-58s %8s   %s\n", fmt.Sprintf("--max-model-len %d (what one cache holds)", p.KVTokens), "1.00", "the server caps requests there")
		case "kv-fp8":
			row("--kv-dtype fp8 (vLLM --kv-cache-dtype fp8)", f.Fits, fmt.Sprintf("%s tokens per cache", commas(f.Plan.KVTokens)))
		case "more-tp":
			row(fmt.Sprintf("twice the GPUs in one engine (%s, %s)", f.Shape, plural(f.Shape.GPUs(), "GPU")), f.Fits,
				fmt.Sprintf("weights per GPU halve: %s tokens per cache", commas(f.Plan.KVTokens)))
		case "dp":
			if f.Plan != nil {
				row(fmt.Sprintf("DP attention (best: %s)", f.Shape), f.Fits, "no fix: a request lives on one rank; DP adds requests, not context")
			} else {
				row("DP attention", 0, "no fix: no DP shape leaves memory for a KV cache, and a request lives on one rank")
			}
		}
	}
}

// parseLevels reads --levels: a comma-separated list of positive concurrencies.
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--levels %q: an empty level (two commas, or a comma at an end): want a list like 1,2,4,8", s)
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--levels: %q is not a positive concurrency", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--levels: no level in %q", s)
	}
	return out, nil
}

// writeLevels evaluates each level of the intended sweep against the KV budget and the
// roofline: the KV demand at the workload's lengths, and what the hardware could do at
// the batch that fits.
func writeLevels(w io.Writer, p *capacity.PlanResult, r *capacity.Roofline, levels []int, prompt, output int, proposed bool, shared capacity.SharedPrefix) {
	tokens := float64(prompt + output)
	ctx := float64(prompt) + float64(output)/2 // a decoding request's mean context
	ceiling, _ := p.ConcurrencyShared(tokens, shared)
	budget := float64(p.KVTokens) * float64(p.Shape.KVCaches())
	title := "Your sweep"
	if proposed {
		title = "The proposed sweep"
	}
	fmt.Fprintf(w, "\n%s against the KV budget (%s tokens in all) and the roofline (predicted, at %s tokens of context)\n", title, commas(int64(budget)), commas(int64(ctx)))
	header := fmt.Sprintf("  %7s %13s %9s", "level", "KV demand", "× budget")
	if r != nil {
		header += fmt.Sprintf(" %8s %10s %11s %10s %-14s", "batch", "user tok/s", "total tok/s", "tok/s/GPU", "bound")
	}
	fmt.Fprintln(w, header+"  verdict")
	var queueing []int
	var topDemand float64
	for _, v := range capacity.LevelVerdictsShared(p, r, levels, prompt, output, shared) {
		line := fmt.Sprintf("  %7d %13s %8.2f×", v.Level, commas(int64(v.Demand)), v.Budget)
		if r != nil && v.Batch >= 1 {
			pt := v.Roofline
			line += fmt.Sprintf(" %8.0f %10.1f %11.0f %10.0f %-14s", v.Batch, pt.PerUserTokS, pt.TotalTokS, pt.TotalTokS/float64(p.Shape.GPUs()), pt.Bound)
		} else if r != nil {
			line += fmt.Sprintf(" %8s %10s %11s %10s %-14s", "—", "—", "—", "—", "")
		}
		verdict := "serves"
		if !v.Serves {
			verdict = "queueing only"
			queueing = append(queueing, v.Level)
			topDemand = v.Demand
		}
		fmt.Fprintln(w, line+"  "+verdict)
	}
	if len(queueing) > 0 {
		top := queueing[len(queueing)-1]
		if shared.Counted() > 0 && topDemand != float64(top)*tokens {
			fmt.Fprintf(w, "Verdict: %d of %d levels can only measure queueing (%s; at the top, %s requests with the shared prefixes held once = %s tokens = %.1f× the KV budget).\n",
				len(queueing), len(levels), joinInts(queueing), commas(int64(top)), shortTokens(topDemand), topDemand/budget)
		} else {
			fmt.Fprintf(w, "Verdict: %d of %d levels can only measure queueing (%s; at the top, %s × %s tokens = %s tokens = %.1f× the KV budget).\n",
				len(queueing), len(levels), joinInts(queueing), commas(int64(top)), commas(int64(tokens)), shortTokens(float64(top)*tokens), float64(top)*tokens/budget)
		}
		fmt.Fprintf(w, "Beyond about %.0f concurrent requests the server cannot batch more; sweep up to about twice that.\n", math.Floor(ceiling))
	} else {
		fmt.Fprintf(w, "Verdict: every level fits the KV budget (%.0f requests of %s tokens).\n", math.Floor(ceiling), commas(int64(tokens)))
	}
	if r != nil {
		fmt.Fprintf(w, "Roofline: %s HBM %.2f TB/s, %s %.0f TFLOP/s dense, %s; all-reduce latency %.0f µs assumed.\n",
			r.GPU.Name, r.GPU.BandwidthBytesS/1e12, r.ComputeDtype, r.PeakFLOPs/1e12, r.GPU.Interconnect, r.AllReduceLatencyS*1e6)
		fmt.Fprintln(w, "It is an upper bound: prefill, scheduling and kernels keep real servers below it.")
	}
}

// shortTokens writes a token count as 3.07M or 412k.
func shortTokens(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return commas(int64(v))
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
