package analyze

import (
	"fmt"
	"math"
)

// Where a what-if figure comes from (issue 28, item 6). The ceiling rows put a
// measured figure at the measured ceiling beside a predicted one at the predicted
// ceiling; where the two concurrencies differ, the row compares two loads, and a
// predicted ceiling past every valid measured level is an extrapolation of the
// model, not a prediction of a measured point. Each ceiling row names the
// concurrency its throughput is at, the predicted one says how far past the
// measured levels it lies, and the first note compares the two at equal
// concurrency, where the model carries a measured level over.

// extrapolationFactor is how far past the highest valid measured level a
// predicted ceiling may lie (× its concurrency) before it is called an
// extrapolation.
const extrapolationFactor = 1.05

// markProvenance fills each ceiling row's OutputTokSAt and the predicted rows'
// Extrapolation, and puts the equal-concurrency comparison first among the notes.
func markProvenance(res *WhatIfResult, r *Run) {
	top := 0.0 // the highest valid measured concurrency
	for _, l := range r.Levels {
		if l.Valid && l.Rate == 0 {
			top = math.Max(top, float64(l.Concurrency))
		}
	}
	var measuredAt *float64
	if a := r.Decision; a != nil && a.AtCeiling != nil {
		measuredAt = pf(a.AtCeiling.Concurrency)
	}
	for i := range res.Rows {
		row := &res.Rows[i]
		if !row.Predicted {
			if row.OutputTokS != nil {
				row.OutputTokSAt = measuredAt
			}
			continue
		}
		if row.OutputTokS == nil || row.Ceiling == nil {
			continue
		}
		row.OutputTokSAt = pf(*row.Ceiling)
		if top > 0 && *row.Ceiling > top*extrapolationFactor {
			row.Extrapolation = fmt.Sprintf("an extrapolation: c≈%s is %.1f× the highest valid measured level (c=%s)", num(*row.Ceiling), *row.Ceiling/top, num(top))
			row.Basis += "; EXTRAPOLATED: " + row.Extrapolation
		}
	}
	if measuredAt == nil || len(res.Rows) < 2 || res.Rows[0].OutputTokS == nil {
		return
	}
	for _, l := range res.Levels {
		if l.Concurrency != *measuredAt || l.OutputTokS == nil {
			continue
		}
		m := *res.Rows[0].OutputTokS
		note := fmt.Sprintf("at equal concurrency first: at c=%s (the measured ceiling) measured %s tok/s, predicted %s [%s–%s] (%+.0f%%)",
			num(*measuredAt), num(math.Round(m)), num(math.Round(l.OutputTokS.Value)), num(math.Round(l.OutputTokS.Low)), num(math.Round(l.OutputTokS.High)), 100*(l.OutputTokS.Value/m-1))
		if p := res.Rows[1]; p.OutputTokSAt != nil && *p.OutputTokSAt != *measuredAt {
			note += fmt.Sprintf("; the ceiling rows compare c=%s measured with c≈%s predicted", num(*measuredAt), num(*p.OutputTokSAt))
			if p.Extrapolation != "" {
				note += ", " + p.Extrapolation
			}
		}
		res.Notes = append([]string{note}, res.Notes...)
		return
	}
}
