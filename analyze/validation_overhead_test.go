package analyze

import (
	"math"
	"os"
	"strconv"
)

// fitOverhead fits the fixed step overhead (prediction.CarryStep) with the vendor
// offsets on the scores kept by keep: the overhead on a grid, each with its vendor
// offsets fitted at it, the one with the least squared log error after them.
func fitOverhead(scores []valScore, keep func(valScore) bool) (float64, map[string]float64) {
	maxMS, _ := strconv.ParseFloat(os.Getenv("OV_MAX"), 64)
	cross := os.Getenv("OV_KINDS") == "cross"
	l1 := os.Getenv("OV_OBJ") == "l1"
	var kept []valScore
	for _, s := range scores {
		if keep(s) {
			kept = append(kept, s)
		}
	}
	bestT, bestErr := 0.0, math.Inf(1)
	var bestOff map[string]float64
	for ms := 0.0; ms <= maxMS+1e-9; ms += 0.25 {
		t0 := ms / 1000
		at := make([]valScore, len(kept))
		for i, s := range kept {
			s.raw, _ = s.step.at(t0)
			at[i] = s
		}
		off := fitVendorOffsets(at, func(valScore) bool { return true })
		e := 0.0
		for _, s := range at {
			if cross && s.from == s.to {
				continue
			}
			r := math.Log(s.raw/s.measured) - (off[vendorOf(s.from)] - off[vendorOf(s.to)])
			if l1 {
				e += math.Abs(r)
			} else {
				e += r * r
			}
		}
		if e < bestErr {
			bestT, bestErr, bestOff = t0, e, off
		}
	}
	return bestT, bestOff
}
