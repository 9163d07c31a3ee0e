package importer

import (
	"fmt"
	"math"
	"os"

	"github.com/ceiling-llm/ceiling/summary"
)

// Summary-level points: some published results hold one summary per configuration
// and load, never per-request records (llm-d-benchmark's benchmark report v0.2,
// InferenceX's agg_*.json). They cannot become a trace (Import refuses them with
// ErrSummaryOnly), but their numbers are measurements of a whole configuration and
// are read by ReadSummary as points marked summary-level, for comparisons beside
// ceiling's own runs and for checking predictions.

// SummaryStats, SummaryPoint and Summary are the summary package's types.
type (
	SummaryStats = summary.Stats
	SummaryPoint = summary.Point
	Summary      = summary.Summary
)

// IsSummaryLevel says whether tool (as Detect names it) writes summary-level
// points only, which ReadSummary reads and Import refuses.
func IsSummaryLevel(tool string) bool {
	t, ok := toolNamed(tool)
	return ok && t.readSummary != nil
}

// ReadSummary reads the summary-level points of a file: an llm-d benchmark report
// or InferenceX results. Other tools' files give an error: import them instead.
func ReadSummary(path string) (*Summary, error) {
	tool, err := Detect(path)
	if err != nil {
		return nil, err
	}
	t, _ := toolNamed(tool)
	if t.readSummary == nil {
		return nil, fmt.Errorf("%s: a %s result with per-request data: import it (ceiling import), it is more than a summary", path, tool)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	s, err := t.readSummary(path, data)
	if err != nil {
		return nil, err
	}
	if err := checkSummary(s, path); err != nil {
		return nil, err
	}
	s.SummaryLevel = true
	s.Files = []string{path}
	return s, nil
}

// stats reads mean/p50/p90/p99 of obj k, scaled to seconds; "median" stands for
// p50 where p50 is absent.
func summaryStats(o object, k string, scale float64) (SummaryStats, error) {
	var st SummaryStats
	sub, ok, err := o.obj(k)
	if err != nil || !ok {
		return st, err
	}
	for _, f := range []struct {
		keys []string
		dst  **float64
	}{{[]string{"mean"}, &st.Mean}, {[]string{"p50", "median"}, &st.P50}, {[]string{"p90"}, &st.P90}, {[]string{"p99"}, &st.P99}} {
		for _, key := range f.keys {
			v, ok, err := sub.float(key)
			if err != nil {
				return st, err
			}
			if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				*f.dst = ptrTo(v * scale)
				break
			}
		}
	}
	return st, nil
}
