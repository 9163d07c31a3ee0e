package importer

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/trace"
)

// Reference is one of the source tool's own summary numbers for a level, in
// ceiling's units: seconds for latencies, per second for rates, a count for
// "requests".
type Reference = trace.SourceReference

// Difference is a reference number that ceiling's analysis of the imported rows
// does not reproduce within float noise.
type Difference = trace.SourceDifference

// Comparison is the result of comparing a run's references with its analysis.
type Comparison = trace.SourceComparison

// tolerance is "float noise" for one reference: the trace stores times as integer
// nanoseconds and chunk gaps as integer microseconds, so latencies may move by up
// to half a microsecond per gap on top of float rounding; vLLM's own TPOT is
// 1.4e-6 relative off its arrays (INDEX.md of the peer results). Beyond 2 µs and
// 1e-5 relative a difference is a different definition, not noise.
func tolerance(r Reference) float64 {
	switch r.Metric {
	case "requests":
		return 0
	case "output_tok_s", "request_s":
		return 1e-9 * math.Abs(r.Value)
	}
	return 2e-6 + 1e-5*math.Abs(r.Value)
}

// Compare checks refs of one level against got, which returns ceiling's number for
// a metric and stat (ok false when it has none).
func Compare(tool string, level int, refs []Reference, got func(metric, stat string) (float64, bool)) (checked int, diffs []Difference) {
	for _, r := range refs {
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			continue
		}
		checked++
		v, ok := got(r.Metric, r.Stat)
		if ok && math.Abs(v-r.Value) <= tolerance(r) {
			continue
		}
		d := Difference{Level: level, Ref: r, Note: definitionNote(tool, r)}
		if ok {
			d.Got = &v
		}
		diffs = append(diffs, d)
	}
	return checked, diffs
}

// MaxDifferenceWarnings is how many differences CompareRun turns into warnings;
// the rest are counted (all are in the Comparison).
const MaxDifferenceWarnings = 8

// CompareRun compares the references of an imported run's levels (tool is the
// source tool) with ceiling's analysis, got giving ceiling's number for a level,
// metric and stat. It returns nil when nothing was checked, else the comparison
// and its warnings: the first MaxDifferenceWarnings differences, then a count.
func CompareRun(tool string, levels []trace.LevelInfo, got func(level int, metric, stat string) (float64, bool)) (*Comparison, []string) {
	c := &Comparison{Tool: tool, Differences: []Difference{}}
	for _, m := range levels {
		if len(m.References) == 0 {
			continue
		}
		n, diffs := Compare(tool, m.Level, m.References, func(metric, stat string) (float64, bool) {
			return got(m.Level, metric, stat)
		})
		c.Checked += n
		c.Differences = append(c.Differences, diffs...)
	}
	if c.Checked == 0 {
		return nil, nil
	}
	var ws []string
	for i, d := range c.Differences {
		if i == MaxDifferenceWarnings {
			ws = append(ws, fmt.Sprintf("%d more differences from %s's own summary (see source_comparison in --format json)", len(c.Differences)-i, tool))
			break
		}
		ws = append(ws, "differs from "+tool+"'s own summary: "+d.String())
	}
	return c, ws
}

// definitionNote explains the differences known to come from a tool's definitions
// (each tool's note, in its own file).
func definitionNote(tool string, r Reference) string {
	t, ok := toolNamed(tool)
	if !ok || t.note == nil {
		return ""
	}
	return t.note(r)
}
