package analyze

import (
	"fmt"
	"math"
)

// carryStep predicts a decode step on another roofline with a fixed per-step
// overhead t0 (prediction.StepOverheadS at run time, a fitted candidate in the
// validation): measured = fromRoofS ÷ e + t0, so the efficiency e is measured
// after t0 is taken off, and the predicted step is toRoofS ÷ e + t0. t0 is not
// scaled by the pipeline depth: it was fitted once per step (a PP shape's stages
// overlap their CPU work).
//
// A measured step shorter than fromRoofS + t0 would leave an efficiency above 1
// (faster than the roofline once t0 is off): t0 is clamped to measured −
// fromRoofS there, so e stays in (0, 1]. A measured step at or under the roofline
// (which the bound forbids; a modelling miss) carries the plain ratio, t0 = 0.
// Any step ≤ 0 gives 0 (nothing to carry).
func carryStep(measuredS, fromRoofS, toRoofS, t0 float64) float64 {
	if measuredS <= 0 || fromRoofS <= 0 || toRoofS <= 0 {
		return 0
	}
	t0 = math.Max(0, math.Min(t0, measuredS-fromRoofS))
	return toRoofS*(measuredS-t0)/fromRoofS + t0
}

// carriedEfficiency is the share of the roofline a measured step reaches once
// the overhead is taken off it (carryStep's e; 0 where nothing carries).
func carriedEfficiency(measuredS, fromRoofS, t0 float64) float64 {
	if measuredS <= 0 || fromRoofS <= 0 {
		return 0
	}
	t0 = math.Max(0, math.Min(t0, measuredS-fromRoofS))
	return fromRoofS / (measuredS - t0)
}

// stepOverheadNote says the what-if's steps carry the fixed overhead ("" where
// it is 0).
func stepOverheadNote(t0 float64) string {
	if t0 <= 0 {
		return ""
	}
	return fmt.Sprintf(" (each measured step less a fixed %.1f ms per step for the CPU's scheduling, launches and sampling, added back to the changed step: docs/predictions.md)", t0*1000)
}
