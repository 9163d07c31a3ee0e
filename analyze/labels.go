package analyze

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The words and numbers the analysis writes into its own sentences (warnings,
// evidence, notes), written as the text output writes them in its tables
// (package numfmt), so that a sentence quotes a figure as the table shows it.

// OfferedLabel is a level's offered load as the analysis's sentences and the text
// output name it: "c=8" in closed loop, "2.5/s" in open loop.
func OfferedLabel(l Level) string {
	if l.Rate > 0 {
		return fmt.Sprintf("%g/s", l.Rate)
	}
	return fmt.Sprintf("c=%d", l.Concurrency)
}

func offeredLabel(l Level) string { return OfferedLabel(l) }

// trimFloat is v with about three significant digits.
func trimFloat(v float64) string { return numfmt.Short(v) }

// concCell is a concurrency: whole numbers without decimals, an interpolated one
// with one.
func concCell(v *float64) string { return numfmt.Concurrency(v) }
