package analyze

import (
	"fmt"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// predictingRoofline is the roofline whatif carries a measured share of the
// roofline on: r with the peak FLOP/s of its tensor cores scaled by share (of its
// ComputeDtype; prediction.ComputeShare at run time, a fitted candidate in the
// validation). FP4 kernels reach a smaller part of the FP4 peak than FP8 and BF16
// kernels of theirs (block scales, and the layers a checkpoint keeps at higher
// precision, all counted at the FP4 peak here), so a prediction onto FP4 tensor
// cores at a compute-bound batch was twice too fast. r, the bound, is left as it
// is (a copy is scaled); nil stays nil.
func predictingRoofline(r *capacity.Roofline, share func(dtype string) float64) *capacity.Roofline {
	if r == nil {
		return nil
	}
	f := share(r.ComputeDtype)
	if f <= 0 || f == 1 {
		return r
	}
	d := *r
	d.PeakFLOPs *= f
	return &d
}

// computeShareNote says which rooflines of a what-if count their tensor cores at
// less than the peak ("" where neither does).
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
			which = append(which, fmt.Sprintf("the %s roofline's %s tensor cores at %.2f of their peak", r.name, strings.ToUpper(r.roof.ComputeDtype), f))
		}
	}
	if len(which) == 0 {
		return ""
	}
	return " (counting " + strings.Join(which, " and ") + " FLOP/s, as public measurements reach: docs/predictions.md)"
}
