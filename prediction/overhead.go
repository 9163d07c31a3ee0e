package prediction

import "math"

// The fixed overhead of a decode step. An engine's step is its kernels' time plus
// a part that does not scale with the GPU: the CPU's scheduling of the batch,
// kernel launches and sampling. A measured step of Ts seconds whose roofline step
// is Rs is read as Rs ÷ e + t0: the kernels run at e of the roofline and t0 is the
// overhead. The changed deployment's step is then Rt ÷ e + t0 at its roofline step
// Rt, with the same kernel efficiency e and the same overhead. Without the
// overhead (t0 = 0) that is the measured share of the roofline carried over; with
// it a slow GPU, whose roofline step is long, reaches a higher share of its
// roofline than a fast one at the same overhead, as the public sweeps show
// (docs/validation.md). t0 is fitted on public measurements (stepOverheadS,
// calibration_table.go; docs/predictions.md says how).

// StepOverheadS is the fitted fixed overhead of a decode step, in seconds.
func StepOverheadS() float64 { return stepOverheadS() }

// CarryStep predicts the changed deployment's step time from a measured step of
// measuredS seconds whose roofline step is fromRoofS, at the changed roofline step
// toRoofS, with the overhead overheadS. The overhead never exceeds the measured
// step's gap to its roofline (the kernels cannot beat the roofline). Steps that
// are not positive give 0.
func CarryStep(measuredS, fromRoofS, toRoofS, overheadS float64) float64 {
	if measuredS <= 0 || fromRoofS <= 0 || toRoofS <= 0 {
		return 0
	}
	t0 := math.Max(0, math.Min(overheadS, measuredS-fromRoofS))
	return toRoofS*(measuredS-t0)/fromRoofS + t0
}
