package capacity

import (
	"fmt"
	"strings"
)

// ParamCount estimates the parameters of a decoder from its config: embeddings, the
// attention projections (GQA or MLA), dense MLPs and experts. Norms and biases are
// left out (well under 0.1%). experts is the part held in routed experts, which
// quantized checkpoints usually store in fewer bits than the rest.
func ParamCount(c *ModelConfig) (total, experts int64, err error) {
	if c.Hidden <= 0 {
		return 0, 0, missing("hidden_size", "needed to estimate the parameter count; or set BudgetInput.WeightsGiB")
	}
	if c.Vocab <= 0 {
		return 0, 0, missing("vocab_size", "needed to estimate the parameter count; or set BudgetInput.WeightsGiB")
	}
	h := int64(c.Hidden)
	emb := int64(c.Vocab) * h
	if !c.TieEmbeddings {
		emb *= 2
	}
	var attn int64
	switch {
	case c.KVLoraRank > 0:
		nh := int64(c.Heads)
		qk := int64(c.QKNopeHeadDim + c.QKRopeHeadDim)
		if c.QLoraRank > 0 {
			attn += h*int64(c.QLoraRank) + int64(c.QLoraRank)*nh*qk
		} else {
			attn += h * nh * qk
		}
		attn += h * int64(c.KVLoraRank+c.QKRopeHeadDim)
		attn += int64(c.KVLoraRank) * nh * int64(c.QKNopeHeadDim+c.VHeadDim)
		attn += nh * int64(c.VHeadDim) * h
	default:
		if c.Heads <= 0 || c.HeadDim <= 0 {
			return 0, 0, missing("num_attention_heads", "needed to estimate the parameter count; or set BudgetInput.WeightsGiB")
		}
		attn = h*int64(c.Heads*c.HeadDim)*2 + 2*h*int64(c.KVHeads*c.HeadDim)
	}
	if c.Intermediate <= 0 && c.Experts == 0 {
		return 0, 0, missing("intermediate_size", "needed to estimate the parameter count; or set BudgetInput.WeightsGiB")
	}
	dense := 3 * h * int64(c.Intermediate)
	var moeExperts, moeShared int64
	if c.Experts > 0 {
		moeExperts = int64(c.Experts) * 3 * h * int64(c.ExpertIntermediate)
		moeShared = int64(c.SharedExperts)*3*h*int64(c.ExpertIntermediate) + h*int64(c.Experts)
	}
	total = emb
	for i, kind := range c.Kinds {
		if kind == LayerState {
			return 0, 0, fmt.Errorf("cannot estimate the parameters of linear-attention/Mamba layers; set BudgetInput.WeightsGiB")
		}
		if kind != LayerNone {
			total += attn
		}
		freq := max(1, c.MoELayerFreq)
		if c.Experts > 0 && i >= c.DenseLayers && i%freq == 0 {
			total += moeExperts + moeShared
			experts += moeExperts
		} else {
			total += dense
		}
	}
	return total, experts, nil
}

// WeightBytes estimates the weight memory of the whole model. weightDtype overrides
// the checkpoint's precision ("bf16", "fp8", "fp4", "int4"); otherwise the
// quantization_config decides: fp8 stores everything in one byte, the 4-bit formats
// (MXFP4, NVFP4, INT4 with group scales, about 4.25-4.5 bits) usually only the experts
// of an MoE (all linear layers of a dense model). paramsB overrides the count.
func WeightBytes(c *ModelConfig, weightDtype string, paramsB float64) (bytes int64, how string, err error) {
	w, err := EstimateWeights(c, weightDtype, paramsB)
	if err != nil {
		return 0, "", err
	}
	return w.RestBytes + w.ExpertBytes, w.How, nil
}

// Weights is the weight estimate of a whole model, split the way deployment shapes
// shard it: the routed experts (sharded over the expert-parallel GPUs with EP) and the
// rest (attention, embeddings, dense MLPs, shared experts, routers).
type Weights struct {
	RestBytes, ExpertBytes   int64
	RestParams, ExpertParams int64
	// ActiveParams is the parameters one token passes through: the rest plus
	// experts_per_tok / n_routed_experts of the routed experts.
	ActiveParams int64
	How          string
}

// EstimateWeights is WeightBytes with the expert/rest split kept. With paramsB given,
// the counted split is scaled to it (all "rest" when the config cannot be counted).
func EstimateWeights(c *ModelConfig, weightDtype string, paramsB float64) (Weights, error) {
	total, experts, err := ParamCount(c)
	if paramsB > 0 {
		given := int64(paramsB * 1e9)
		if err != nil || total <= 0 {
			experts = 0
		} else {
			experts = int64(float64(experts) * float64(given) / float64(total))
		}
		total, err = given, nil
	}
	if err != nil {
		return Weights{}, err
	}
	// Each size is bounded, but their products can still exceed any model and,
	// in bytes, int64.
	if float64(total) > maxParamsB*1e9 {
		return Weights{}, fmt.Errorf("the config's sizes give %.3g parameters, more than any plausible model (at most %g billion): check its sizes, or set BudgetInput.WeightsGiB", float64(total), maxParamsB)
	}
	native := 2.0
	if c.Dtype == "fp32" {
		native = 4
	}
	rest, exp := native, native
	label := c.Dtype
	if label == "" {
		label = "bf16"
	}
	// 4-bit formats carry scales: MXFP4 one 8-bit scale per 32 values (4.25 bits),
	// NVFP4 one FP8 scale per 16 and INT4 one 16-bit scale per 32 (4.5 bits).
	fourBit := 4.5 / 8
	switch strings.ToLower(weightDtype) {
	case "":
		switch {
		case c.QuantMethod == "fp8":
			rest, exp, label = 1, 1, "fp8"
		case c.QuantMethod == "":
		default: // mxfp4, modelopt (NVFP4), compressed-tensors, awq, gptq: 4-bit
			bits := 4.5
			if c.QuantMethod == "mxfp4" {
				bits = 4.25
			}
			exp = bits / 8
			label = fmt.Sprintf("%s (≈%g bits) experts, %s rest", c.QuantMethod, bits, label)
			if experts == 0 {
				rest, label = exp, fmt.Sprintf("%s (≈%g bits)", c.QuantMethod, bits)
			}
		}
	case "bf16", "fp16", "bfloat16", "float16":
		rest, exp, label = 2, 2, weightDtype
	case "fp32", "float32":
		rest, exp, label = 4, 4, weightDtype
	case "fp8", "int8":
		rest, exp, label = 1, 1, weightDtype
	case "fp4", "nvfp4", "mxfp4", "int4":
		rest, exp, label = fourBit, fourBit, weightDtype+" (≈4.5 bits with scales)"
	default:
		return Weights{}, fmt.Errorf("unknown weight dtype %q (want bf16, fp16, fp8, int8, fp4, int4)", weightDtype)
	}
	w := Weights{
		RestBytes:    int64(float64(total-experts) * rest),
		ExpertBytes:  int64(float64(experts) * exp),
		RestParams:   total - experts,
		ExpertParams: experts,
		ActiveParams: total,
		How:          fmt.Sprintf("%.1fB parameters in %s", float64(total)/1e9, label),
	}
	if experts > 0 && c.Experts > 0 && c.ExpertsPerToken > 0 {
		w.ActiveParams = total - experts + experts*int64(c.ExpertsPerToken)/int64(c.Experts)
	}
	return w, nil
}

// CheckWeightDtype refuses a weight precision the weight estimate does not know
// (BudgetInput.WeightDtype; "" is the config's own).
func CheckWeightDtype(d string) error {
	switch strings.ToLower(d) {
	case "", "bf16", "fp16", "bfloat16", "float16", "fp32", "float32", "fp8", "int8", "fp4", "nvfp4", "mxfp4", "int4":
		return nil
	}
	return fmt.Errorf("unknown weight dtype %q (want bf16, fp16, fp8, int8, fp4, nvfp4, mxfp4, int4)", d)
}
