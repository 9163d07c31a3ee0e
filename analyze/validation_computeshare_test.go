package analyze

import (
	"fmt"
	"math"
	"strings"
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

// fitCandidate is one candidate pair of the fixed per-step overhead t0 (s,
// carryStep) and the FP4 compute share, fitted together: t0 lowers a small
// batch's predicted speed-up onto a faster GPU, the FP4 share a compute-bound
// batch's.
type fitCandidate struct{ t0, fp4 float64 }

// maxStepOverheadMS bounds the overhead's grid: a few ms is what a step's CPU work
// costs; past 20 ms it would be most of a slow GPU's step.
const maxStepOverheadMS = 20

// fitCandidates are the candidates: t0 from 0 to maxStepOverheadMS by 0.5 ms,
// each with every FP4 share (fp4Shares).
func fitCandidates() []fitCandidate {
	var out []fitCandidate
	for i := 0; i <= 2*maxStepOverheadMS; i++ {
		for _, f := range fp4Shares() {
			out = append(out, fitCandidate{t0: float64(i) / 2000, fp4: f})
		}
	}
	return out
}

// fitComputeShare fits the step overhead and the FP4 compute share (an index in
// fitCandidates) with the vendor offsets on the scores kept by keep.
func fitComputeShare(scores []valScore, keep func(valScore) bool) (int, map[string]float64) {
	var kept []valScore
	for _, s := range scores {
		if keep(s) {
			kept = append(kept, s)
		}
	}
	best, bestErr := len(fp4Shares())-1, math.Inf(1) // no overhead, the whole peak
	var bestOff map[string]float64
	at := make([]valScore, len(kept))
	for i := range fitCandidates() {
		for j, s := range kept {
			s.raw = s.rawAt[i]
			at[j] = s
		}
		off := fitVendorOffsets(at, func(valScore) bool { return true })
		e := 0.0
		for _, s := range at {
			r := math.Log(s.raw/s.measured) - (off[vendorOf(s.from)] - off[vendorOf(s.to)])
			e += r * r
		}
		if e < bestErr {
			best, bestErr, bestOff = i, e, off
		}
	}
	return best, bestOff
}

// writeComputeShares says which FP4 shares and step overheads the scored
// predictions were made with (each fitted without its own two deployments) and
// the ones whatif uses.
func writeComputeShares(doc *strings.Builder, scores []valScore, runTime fitCandidate) {
	lo, hi := math.Inf(1), math.Inf(-1)
	tlo, thi := math.Inf(1), math.Inf(-1)
	for _, s := range scores {
		lo, hi = math.Min(lo, s.fp4), math.Max(hi, s.fp4)
		tlo, thi = math.Min(tlo, s.t0), math.Max(thi, s.t0)
	}
	fmt.Fprintf(doc, "\nThe FP4 tensor cores' share of their peak FLOP/s (`prediction.ComputeShare`, docs/predictions.md), fitted with the vendor offsets and the step overhead without each scored prediction's two deployments: %.2f–%.2f over the scored predictions; %.2f at run time, fitted on every error.\n", lo, hi, runTime.fp4)
	fmt.Fprintf(doc, "\nThe fixed per-step overhead t0 (`prediction.StepOverheadS`, docs/predictions.md: measured step = roofline step ÷ e + t0), fitted the same way: %.1f–%.1f ms over the scored predictions; %.1f ms at run time, fitted on every error.\n", tlo*1000, thi*1000, runTime.t0*1000)
}
