package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// rooflineTerms are the fitted terms of the roofline whatif carries a measured
// share of the roofline on (docs/predictions.md).
type rooflineTerms struct {
	// computeShare is the share of a tensor-core dtype's peak FLOP/s counted on.
	computeShare func(dtype string) float64
	// allReduceLatency multiplies the latency of one small collective.
	allReduceLatency float64
}

// runTimeTerms are the terms fitted on every public error (prediction's tables).
func runTimeTerms() rooflineTerms {
	return rooflineTerms{computeShare: prediction.ComputeShare, allReduceLatency: prediction.AllReduceLatencyFactor()}
}

// predictingRoofline is the roofline whatif carries a measured share of the
// roofline on: r with the peak FLOP/s of its tensor cores scaled by their compute
// share and its collectives' latency by the fitted factor. FP4 kernels reach a
// smaller part of the FP4 peak than FP8 and BF16 kernels of theirs (block scales,
// and the layers a checkpoint keeps at higher precision, all counted at the FP4
// peak here), and a served step's all-reduces cost more than the bare transfer
// the bound assumes. r, the bound, is left as it is (a copy is changed); nil stays
// nil.
func predictingRoofline(r *capacity.Roofline, t rooflineTerms) *capacity.Roofline {
	if r == nil {
		return nil
	}
	d := *r
	if f := t.computeShare(r.ComputeDtype); f > 0 {
		d.PeakFLOPs *= f
	}
	if t.allReduceLatency > 0 {
		d.AllReduceLatencyS *= t.allReduceLatency
	}
	return &d
}

// computeShareNote says which terms a what-if's rooflines were predicted with
// ("" where none changed them).
func computeShareNote(base, changed *capacity.Roofline) string {
	var which []string
	for _, r := range []struct {
		name string
		roof *capacity.Roofline
	}{{"measured", base}, {"changed", changed}} {
		if r.roof == nil {
			continue
		}
		if f := prediction.ComputeShare(r.roof.ComputeDtype); f != 1 {
			which = append(which, fmt.Sprintf("the %s roofline's %s tensor cores at %.2f of their peak FLOP/s", r.name, strings.ToUpper(r.roof.ComputeDtype), f))
		}
	}
	if f := prediction.AllReduceLatencyFactor(); f != 1 {
		which = append(which, fmt.Sprintf("each all-reduce's latency × %.1f", f))
	}
	if len(which) == 0 {
		return ""
	}
	return " (counting " + strings.Join(which, " and ") + ", as public measurements reach: docs/predictions.md)"
}
