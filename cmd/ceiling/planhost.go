package main

import (
	"fmt"
	"io"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
)

// maxHostKVGiB bounds --host-kv-gib: 64 TiB, far above any host's memory.
const maxHostKVGiB = 64 << 10

// hostTierKV is what a host KV tier (vLLM's CPU offloading connector, LMCache's
// CPU backend, SGLang's HiCache host pool) of hostGiB per serving engine adds to
// a plan: the tokens it holds and the requests of tokens it keeps beside the
// GPUs', all engines together.
type hostTierKV struct {
	tokensPerEngine float64 // host tokens of one serving engine
	requests        float64 // requests of the workload's length the host tiers hold
}

// planHostTier works out a host tier of hostGiB per serving engine: it keeps the
// same KV bytes per token as the GPUs, spread over the engine's GPUs (each rank
// offloads its own shard of the heads, each DP rank its own requests), so each
// GPU's share of it, hostGiB / GPUs per engine, holds what that much GPU KV
// budget would.
func planHostTier(p *capacity.PlanResult, hostGiB float64, tokens int) hostTierKV {
	gpusPerEngine := float64(p.Budget.GPUs) / float64(max(p.Replicas, 1))
	hostPerGPU := hostGiB * (1 << 30) / gpusPerEngine
	var h hostTierKV
	if bpt := p.KV.BytesPerToken(); bpt > 0 {
		h.tokensPerEngine = hostPerGPU / float64(bpt) * float64(max(p.Shape.DP, 1))
	}
	if per := p.KV.RequestBytes(float64(tokens)); per > 0 {
		h.requests = float64(p.Shape.KVCaches()) * hostPerGPU / per
	}
	return h
}

// writeHostTier prints the KV ceiling without and with a host tier of hostGiB per
// serving engine, as a prediction: the host tier keeps KV that would otherwise be
// recomputed (prefixes to reuse, preempted requests), while a request decodes
// from GPU memory, so the running batch stays the GPU's.
func writeHostTier(w io.Writer, p *capacity.PlanResult, hostGiB float64, prompt, output int) {
	tokens := prompt + output
	gpu := p.Concurrency(float64(tokens))
	h := planHostTier(p, hostGiB, tokens)
	fmt.Fprintf(w, "\nHost KV tier (a prediction: --host-kv-gib %g per serving engine)\n", hostGiB)
	fmt.Fprintf(w, "  %-50s%14s\n", "host tier holds, per serving engine", commas(int64(math.Round(h.tokensPerEngine)))+" tokens")
	fmt.Fprintf(w, "  %-50s%8.2f\n", fmt.Sprintf("requests of %s tokens the GPUs' KV holds", commas(int64(tokens))), gpu)
	fmt.Fprintf(w, "  %-50s%8.2f\n", "... the GPUs' and the host tier's together", gpu+h.requests)
	fmt.Fprintf(w, "Predicted: at most about %.0f requests run at once with or without the host tier (a request decodes\n", math.Floor(gpu))
	fmt.Fprintf(w, "from GPU memory: the GPUs' KV binds the batch); the host tier keeps the KV of about %.0f more\n", math.Floor(h.requests))
	fmt.Fprintf(w, "(shared prefixes, conversation histories, preempted requests) that would otherwise be recomputed.\n")
	fmt.Fprintf(w, "Once it fills too, the host tier binds. `ceiling analyze` shows, per level, which tier served the KV.\n")
}
