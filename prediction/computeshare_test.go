package prediction

import "testing"

// The fitted FP4 share is applied, and a dtype without a fitted share counts on
// its whole peak: a share of 1 would make the term a no-op, one above 1 would
// predict beyond the roofline's peak.
func TestComputeShare(t *testing.T) {
	for _, tc := range []struct {
		dtype  string
		fitted bool
	}{{"fp4", true}, {"fp8", false}, {"bf16", false}, {"", false}, {"int3", false}} {
		f := ComputeShare(tc.dtype)
		switch {
		case tc.fitted && (f <= 0 || f >= 1):
			t.Errorf("ComputeShare(%q) = %g, want a fitted share in (0, 1)", tc.dtype, f)
		case !tc.fitted && f != 1:
			t.Errorf("ComputeShare(%q) = %g, want 1 (no fitted share)", tc.dtype, f)
		}
	}
}
