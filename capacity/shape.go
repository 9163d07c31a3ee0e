package capacity

import (
	"fmt"
	"strings"
)

// Shape is how one model is laid out over the GPUs of a deployment, in the vocabulary
// of the serving engines:
//
//   - TP, tensor parallelism: every layer's matrices split over TP GPUs (vLLM and SGLang
//     --tensor-parallel-size). GQA KV heads split with them; an MLA latent cache is
//     replicated on every TP rank.
//   - DP, data-parallel attention: DP attention ranks of TP GPUs each, each serving its
//     own requests with its own KV cache (vLLM --data-parallel-size, SGLang
//     --enable-dp-attention --dp-size). KV capacity grows with the ranks; the attention
//     and other non-expert weights are replicated on every rank.
//   - EP, expert parallelism: the routed experts sharded over the DP×TP GPUs of a stage
//     instead of replicated per DP rank (vLLM --enable-expert-parallel). Without EP,
//     DP ranks are plain replicas of the whole model inside one engine.
//   - PP, pipeline parallelism: the layers split over PP stages, the KV cache with them.
//   - Replicas: independent serving engines of TP×DP×PP GPUs each.
//
// GPUs = TP × DP × PP × Replicas.
type Shape struct {
	TP, DP, PP int
	EP         bool
	Replicas   int
}

// EngineGPUs is the GPUs of one serving engine: TP × DP × PP.
func (s Shape) EngineGPUs() int { return s.TP * s.DP * s.PP }

// GPUs is every GPU of the deployment.
func (s Shape) GPUs() int { return s.EngineGPUs() * s.Replicas }

// KVCaches is how many independent KV caches the deployment holds: one per DP rank of
// every replica. A request lives in one of them.
func (s Shape) KVCaches() int { return s.DP * s.Replicas }

// ExpertShards is how many GPUs share the routed experts of one layer: DP×TP with EP,
// TP without.
func (s Shape) ExpertShards() int {
	if s.EP {
		return s.DP * s.TP
	}
	return s.TP
}

// String names the shape the way the engines' flags would: "TP 8", "DP 8 × TP 1 + EP",
// "TP 4 × PP 2, 2 replicas".
func (s Shape) String() string {
	var parts []string
	if s.DP > 1 {
		parts = append(parts, fmt.Sprintf("DP %d", s.DP))
	}
	parts = append(parts, fmt.Sprintf("TP %d", s.TP))
	if s.PP > 1 {
		parts = append(parts, fmt.Sprintf("PP %d", s.PP))
	}
	out := strings.Join(parts, " × ")
	if s.EP {
		out += " + EP"
	}
	if s.Replicas > 1 {
		out += fmt.Sprintf(", %d replicas", s.Replicas)
	}
	return out
}

// Shape returns the deployment shape with the defaults applied, the one definition
// every subcommand shares: DP and PP 0 are 1; TP 0 is one engine over every GPU
// (GPUs ÷ (DP × PP)); GPUs 0 is one engine (TP × DP × PP); all 0 is one GPU. It does not
// check that GPUs is a multiple of TP × DP × PP: CheckShape does.
func (in BudgetInput) Shape() Shape {
	s := Shape{TP: in.TP, DP: max(in.DP, 1), PP: max(in.PP, 1), EP: in.EP}
	gpus := in.GPUs
	if s.TP <= 0 {
		s.TP = max(1, gpus/(s.DP*s.PP))
	}
	if gpus <= 0 {
		gpus = s.EngineGPUs()
	}
	s.Replicas = max(1, gpus/s.EngineGPUs())
	return s
}

// Deployment returns GPUs and TP with the defaults of Shape applied.
func (in BudgetInput) Deployment() (gpus, tp int) {
	s := in.Shape()
	if in.GPUs > 0 {
		return in.GPUs, s.TP
	}
	return s.GPUs(), s.TP
}

// CheckShape says whether the GPU count fits the shape; its errors name the fields.
func (in BudgetInput) CheckShape() error {
	s := in.Shape()
	gpus, _ := in.Deployment()
	switch {
	case in.DP < 0 || in.PP < 0 || in.TP < 0 || in.GPUs < 0:
		return fmt.Errorf("BudgetInput.GPUs, TP, DP and PP must not be negative")
	case s.DP == 1 && s.PP == 1 && gpus%s.TP != 0:
		return fmt.Errorf("BudgetInput.GPUs %d is not a multiple of BudgetInput.TP %d", gpus, s.TP)
	case gpus%s.EngineGPUs() != 0:
		return fmt.Errorf("BudgetInput.GPUs %d is not a multiple of BudgetInput.TP × BudgetInput.DP × BudgetInput.PP = %d × %d × %d", gpus, s.TP, s.DP, s.PP)
	}
	return nil
}

// WeightsPerGPU spreads the whole model's weights over one GPU of shape s: the rest
// (attention, embeddings, dense MLPs, shared experts) split by TP and PP and replicated
// on every DP rank, the routed experts split by PP and by the expert shards (DP×TP
// with EP, TP without). This is vLLM's layout; SGLang's DP attention also shards the
// dense MLPs and embeddings over DP×TP, so it needs somewhat less than this.
func WeightsPerGPU(w Weights, s Shape) int64 {
	return w.RestBytes/int64(s.TP*s.PP) + w.ExpertBytes/int64(s.ExpertShards()*s.PP)
}

// Stage is the KV footprint on one GPU of a pipeline stage: each of pp stages holds
// its share of the layers (rounded up: the largest stage decides).
func (k KVModel) Stage(pp int) KVModel {
	if pp <= 1 {
		return k
	}
	share := func(bytes int64, layers int) (int64, int) {
		if layers == 0 {
			return bytes, 0
		}
		per := (layers + pp - 1) / pp
		return bytes / int64(layers) * int64(per), per
	}
	var full, slide, state int
	k.FullBytesPerToken, full = share(k.FullBytesPerToken, k.FullLayers)
	k.SlidingBytesPerToken, slide = share(k.SlidingBytesPerToken, k.SlidingLayers)
	k.StateBytesPerRequest, state = share(k.StateBytesPerRequest, k.StateLayers)
	k.Derivation = append(append([]string(nil), k.Derivation...), fmt.Sprintf(
		"PP %d: the largest stage holds %d of %d attention layers (%d of %d state layers)",
		pp, full+slide, k.FullLayers+k.SlidingLayers, state, k.StateLayers))
	k.FullLayers, k.SlidingLayers, k.StateLayers = full, slide, state
	return k
}
