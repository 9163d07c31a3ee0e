package prediction

import "testing"

// The fitted overhead is a few milliseconds: 0 would make the term a no-op, and
// one past a slow decode step (tens of ms) would leave no share of the roofline
// to carry.
func TestStepOverheadS(t *testing.T) {
	if s := StepOverheadS(); s <= 0 || s > 0.02 {
		t.Errorf("StepOverheadS() = %g s, want a fitted overhead in (0, 20 ms]", s)
	}
}
