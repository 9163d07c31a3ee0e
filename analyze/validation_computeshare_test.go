package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/prediction"
)

// The second portable part learned from the errors: the share of the FP4 tensor
// cores' peak FLOP/s that predictions count on (prediction.ComputeShare). The
// roofline counts every matmul of an NVFP4 or MXFP4 deployment at the FP4 peak,
// twice the FP8 one; a deployment compute-bound there (TensorRT-LLM's Llama-3.3-70B
// NVFP4 on B200 and GB200 at its maximum batch) reached about half the share of
// its roofline that FP8 deployments reach of theirs, so predictions onto it were
// 20–40% high and from it as low. The share is fitted on a grid with the vendor
// offsets (ridge least squares at each candidate, the least squared log error
// after them, over every kind of change), and a scored prediction's share is
// fitted without its own two deployments, as its vendor offsets are. Tried the
// same way and not kept (another GPU's held-out median, 18.0% before): one share
// for every dtype (19.7%; lengths 16.3%), BF16's alone (19.7%), FP8's alone (fitted
// at 1: no change), a factor on the all-reduce latency with this share (16.3%
// against this share's 16.1%; another precision or shape 30.2% against 28.4%); the
// reverted commits on branch i-model say more. The fixed per-step overhead
// (carryStep), not kept on the earlier roofline (lengths rose past their goal), is
// fitted with the share on the operator-level roofline with attention.

// fp4Shares are the candidate shares of the FP4 peak, 1 (the whole peak) last.
func fp4Shares() []float64 {
	var out []float64
	for f := 0.30; f < 1-1e-9; f += 0.05 {
		out = append(out, math.Round(f*100)/100)
	}
	return append(out, 1)
}

// fitCandidate is one candidate of the fixed step overhead (carryStep: per step,
// and per pipeline stage past the first) and the FP4 compute share (an index in
// fp4Shares): the overhead lowers a small batch's predicted speed-up onto a
// faster GPU (and a deeper pipeline's throughput), the FP4 share a compute-bound
// batch's.
type fitCandidate struct {
	o     prediction.Overhead
	share int
}

func (c fitCandidate) fp4() float64 { return fp4Shares()[c.share] }

// maxStepOverheadMS bounds the per-step overhead's grid: a few ms is what a step's
// CPU work costs; past 20 ms it would be most of a slow GPU's step.
const maxStepOverheadMS = 20

// stageOverheadsMS are the candidate overheads of a further pipeline stage (ms):
// its launches and the wait for the previous stage's activations, from none to
// the better part of a slow stage's step.
func stageOverheadsMS() []float64 {
	var out []float64
	for ms := 0.0; ms <= 20; ms += 0.5 {
		out = append(out, ms)
	}
	return out
}

// fitComputeShare fits the step overhead and the FP4 compute share with the
// vendor offsets on the scores kept by keep, each at the least squared log error
// after the offsets (ridge least squares at each candidate), in two stages so
// that the pipelines, one publisher's, do not decide what every deployment pays:
// the per-step overhead (0 to maxStepOverheadMS by 0.5 ms) and the FP4 share on
// the predictions between single-stage deployments, then the overhead of a
// further stage (stageOverheadsMS) on the predictions that involve a pipeline,
// the first two fixed. The offsets returned are fitted on every kept score at the
// result.
func fitComputeShare(scores []valScore, keep func(valScore) bool) (fitCandidate, map[string]float64) {
	var single, piped, all []valScore
	for _, s := range scores {
		if !keep(s) {
			continue
		}
		all = append(all, s)
		if s.from.roof.Shape.PP > 1 || s.to.roof.Shape.PP > 1 {
			piped = append(piped, s)
		} else {
			single = append(single, s)
		}
	}
	best := fitCandidate{share: len(fp4Shares()) - 1} // no overhead, the whole peak
	bestErr := math.Inf(1)
	for i := 0; i <= 2*maxStepOverheadMS; i++ {
		for f := range fp4Shares() {
			c := fitCandidate{o: prediction.Overhead{StepS: float64(i) / 2000}, share: f}
			if e, _ := squaredLogError(single, c); e < bestErr {
				best, bestErr = c, e
			}
		}
	}
	if len(piped) > 0 {
		bestErr = math.Inf(1)
		first := best
		for _, ms := range stageOverheadsMS() {
			c := first
			c.o.ExtraStageS = ms / 1000
			if e, _ := squaredLogError(piped, c); e < bestErr {
				best, bestErr = c, e
			}
		}
	}
	_, off := squaredLogError(all, best)
	return best, off
}

// squaredLogError is the sum of the squared log errors of the scores predicted
// with candidate c after the vendor offsets fitted on them, and the offsets.
func squaredLogError(scores []valScore, c fitCandidate) (float64, map[string]float64) {
	at := make([]valScore, len(scores))
	for j, s := range scores {
		s.raw, _ = s.at(c)
		at[j] = s
	}
	off := fitVendorOffsets(at, func(valScore) bool { return true })
	e := 0.0
	for _, s := range at {
		r := math.Log(s.raw/s.measured) - (off[vendorOf(s.from)] - off[vendorOf(s.to)])
		e += r * r
	}
	return e, off
}

// writeComputeShares says which FP4 shares and step overheads the scored
// predictions were made with (each fitted without its own two deployments) and
// the ones whatif uses.
func writeComputeShares(doc *strings.Builder, scores []valScore, runTime fitCandidate) {
	lo, hi := math.Inf(1), math.Inf(-1)
	tlo, thi := math.Inf(1), math.Inf(-1)
	slo, shi := math.Inf(1), math.Inf(-1)
	for _, s := range scores {
		lo, hi = math.Min(lo, s.fit.fp4()), math.Max(hi, s.fit.fp4())
		tlo, thi = math.Min(tlo, s.fit.o.StepS), math.Max(thi, s.fit.o.StepS)
		slo, shi = math.Min(slo, s.fit.o.ExtraStageS), math.Max(shi, s.fit.o.ExtraStageS)
	}
	fmt.Fprintf(doc, "\nThe FP4 tensor cores' share of their peak FLOP/s (`prediction.ComputeShare`, docs/predictions.md), fitted with the vendor offsets and the step overhead without each scored prediction's two deployments: %.2f–%.2f over the scored predictions; %.2f at run time, fitted on every error.\n", lo, hi, runTime.fp4())
	fmt.Fprintf(doc, "\nThe fixed step overhead (`prediction.StepOverhead`, docs/predictions.md: measured step = roofline step ÷ e + t0 + (PP − 1) × ts), fitted the same way: per step t0 %.1f–%.1f ms and per pipeline stage past the first ts %.1f–%.1f ms over the scored predictions; %.1f ms and %.1f ms at run time, fitted on every error.\n",
		tlo*1000, thi*1000, slo*1000, shi*1000, runTime.o.StepS*1000, runTime.o.ExtraStageS*1000)
}
