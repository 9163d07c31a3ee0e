package analyze

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// carryStep predicts a decode step on another roofline with a fixed overhead
// per step (prediction.Overhead.S of each deployment's pipeline stages: fromO for
// the measured one, toO for the changed one): measured = fromRoofS ÷ e + fromO,
// so the efficiency e is measured after the overhead is taken off, and the
// predicted step is toRoofS ÷ e + toO.
//
// A measured step shorter than fromRoofS + fromO would leave an efficiency above
// 1 (faster than the roofline once the overhead is off): both overheads are
// scaled down by the same factor there, so e stays in (0, 1]. A measured step at
// or under the roofline (which the bound forbids; a modelling miss) carries the
// plain ratio, with no overhead. Any step ≤ 0 gives 0 (nothing to carry).
func carryStep(measuredS, fromRoofS, toRoofS, fromO, toO float64) float64 {
	if measuredS <= 0 || fromRoofS <= 0 || toRoofS <= 0 {
		return 0
	}
	k := overheadScale(measuredS, fromRoofS, fromO)
	return toRoofS*(measuredS-k*fromO)/fromRoofS + k*toO
}

// carriedEfficiency is the share of the roofline a measured step reaches once
// its overhead fromO is taken off it (carryStep's e; 0 where nothing carries).
func carriedEfficiency(measuredS, fromRoofS, fromO float64) float64 {
	if measuredS <= 0 || fromRoofS <= 0 {
		return 0
	}
	return fromRoofS / (measuredS - overheadScale(measuredS, fromRoofS, fromO)*fromO)
}

// overheadScale is the factor in [0, 1] the overheads are scaled by so that the
// measured step less its overhead stays at least the roofline's step (carryStep).
func overheadScale(measuredS, fromRoofS, fromO float64) float64 {
	if fromO <= 0 {
		return 1
	}
	return math.Max(0, math.Min(1, (measuredS-fromRoofS)/fromO))
}

// stepOverheadS is the overhead o of one step of roofline r's deployment, by its
// pipeline stages (a nil roofline counts one).
func stepOverheadS(o prediction.Overhead, r *capacity.Roofline) float64 {
	if r == nil {
		return o.S(1)
	}
	return o.S(r.Shape.PP)
}

// stepOverheadNote says the what-if's steps carry the fixed overhead ("" where
// there is none).
func stepOverheadNote(o prediction.Overhead) string {
	if o.StepS <= 0 && o.ExtraStageS <= 0 {
		return ""
	}
	stage := ""
	if o.ExtraStageS > 0 {
		stage = fmt.Sprintf(" and %.1f ms per pipeline stage past the first", o.ExtraStageS*1000)
	}
	return fmt.Sprintf(" (each measured step less a fixed %.1f ms per step%s for the CPU's scheduling, launches and sampling, added back to the changed step: docs/predictions.md)", o.StepS*1000, stage)
}
