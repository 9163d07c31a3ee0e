package prediction

import (
	"math"
	"testing"
)

// The fitted overhead is a few milliseconds per step: 0 would make the term a
// no-op, and one past a slow decode step (tens of ms) would leave no share of the
// roofline to carry. A pipeline's further stages add to it, never take off.
func TestStepOverhead(t *testing.T) {
	o := StepOverhead()
	if o.StepS <= 0 || o.StepS > 0.02 {
		t.Errorf("StepOverhead().StepS = %g s, want a fitted overhead in (0, 20 ms]", o.StepS)
	}
	if o.ExtraStageS < 0 || o.ExtraStageS > 0.02 {
		t.Errorf("StepOverhead().ExtraStageS = %g s, want one in [0, 20 ms]", o.ExtraStageS)
	}
}

func TestOverheadS(t *testing.T) {
	o := Overhead{StepS: 0.004, ExtraStageS: 0.002}
	for _, tc := range []struct {
		stages int
		want   float64
	}{{0, 0.004}, {1, 0.004}, {2, 0.006}, {8, 0.018}} {
		if got := o.S(tc.stages); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("S(%d) = %g, want %g", tc.stages, got, tc.want)
		}
	}
}
