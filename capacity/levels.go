package capacity

import "math"

// ProposeLevels proposes closed-loop sweep levels that bracket a predicted ceiling:
// doublings from 1 up to about twice the ceiling, with the half-steps (×1.5) added
// between half and twice the ceiling where the resolution matters. Never 1024 by habit:
// the sweep stops where the prediction says it stops paying.
func ProposeLevels(ceiling float64) []int {
	if math.IsNaN(ceiling) || ceiling < 1 {
		return []int{1}
	}
	top := 2 * ceiling
	var levels []int
	for l := 1; float64(l) <= top*1.01; l *= 2 {
		levels = append(levels, l)
		half := l + l/2
		if l >= 2 && float64(half) >= ceiling/2 && float64(half) <= top*1.01 {
			levels = append(levels, half)
		}
	}
	// Reach about twice the ceiling when the last doubling fell well short of it.
	if last := levels[len(levels)-1]; float64(last) < top/1.3 {
		levels = append(levels, int(math.Round(top)))
	}
	return levels
}
