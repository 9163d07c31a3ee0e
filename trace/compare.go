package trace

import (
	"fmt"
	"math"
)

// SourceDifference is a source tool's reference number that ceiling's analysis of
// the imported rows does not reproduce within float noise.
type SourceDifference struct {
	Level int             `json:"level"`
	Ref   SourceReference `json:"reference"`
	Got   *float64        `json:"got"`  // null when ceiling has no such number for the level
	Note  string          `json:"note"` // the known definition difference, "" when none is known
}

// SourceComparison is the result of comparing an imported run's references (its
// tool's own summary numbers) with ceiling's analysis of its rows.
type SourceComparison struct {
	Tool        string             `json:"tool"`
	Checked     int                `json:"checked"`
	Differences []SourceDifference `json:"differences"`
}

// String says the difference in one line, in ms for latencies.
func (d SourceDifference) String() string {
	unit, scale := "", 1.0
	switch d.Ref.Metric {
	case "ttft", "tpot", "itl", "e2e":
		unit, scale = " ms", 1e3
	case "output_tok_s":
		unit = " tok/s"
	case "request_s":
		unit = " req/s"
	}
	got := "none"
	if d.Got != nil {
		got = fmt.Sprintf("%.6g%s", *d.Got*scale, unit)
		if d.Ref.Value != 0 {
			got += fmt.Sprintf(" (%+.3g%%)", 100*(*d.Got-d.Ref.Value)/math.Abs(d.Ref.Value))
		}
	}
	s := fmt.Sprintf("level %d %s %s: the tool says %.6g%s (%s), ceiling %s", d.Level, d.Ref.Metric, d.Ref.Stat,
		d.Ref.Value*scale, unit, d.Ref.Key, got)
	if d.Note != "" {
		s += ": " + d.Note
	}
	return s
}
