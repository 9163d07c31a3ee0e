package capacity

import (
	"math"
	"testing"
)

func TestProposeLevels(t *testing.T) {
	tests := []struct {
		ceiling float64
		want    []int
	}{
		{72.4, []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128}},
		{2, []int{1, 2, 3, 4}},
		{0.5, []int{1}},
		{math.NaN(), []int{1}},
		{10, []int{1, 2, 4, 6, 8, 12, 16}},
		{1000, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2000}},
	}
	for _, tt := range tests {
		got := ProposeLevels(tt.ceiling)
		if !equalInts(got, tt.want) {
			t.Errorf("ProposeLevels(%v) = %v, want %v", tt.ceiling, got, tt.want)
		}
		if tt.ceiling >= 1 && float64(got[len(got)-1]) > 2.05*tt.ceiling {
			t.Errorf("ProposeLevels(%v) goes beyond twice the ceiling: %v", tt.ceiling, got)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
