package main

import (
	"os"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
)

// splitSummaries separates the summary-level files given as runs (an llm-d
// benchmark report, InferenceX points) from the rest and reads them: they hold no
// requests to analyze, and are set beside the measured runs instead.
func splitSummaries(args []string) (rest []string, sums []*importer.Summary, err error) {
	for _, a := range args {
		// Detect opens the file: a FIFO or device would block it, and is left to
		// the run reader, which refuses it by name.
		if st, err := os.Stat(a); err != nil || !(st.Mode().IsRegular() || st.IsDir()) {
			rest = append(rest, a)
			continue
		}
		tool, derr := importer.Detect(a)
		if derr != nil || !importer.IsSummaryLevel(tool) {
			rest = append(rest, a)
			continue
		}
		s, err := importer.ReadSummary(a)
		if err != nil {
			return nil, nil, err
		}
		sums = append(sums, s)
	}
	return rest, sums, nil
}

// attachSummaries sets every summary-level file beside every measured run of a.
func attachSummaries(a *analyze.Analysis, opt analyze.Options, sums []*importer.Summary) {
	for _, s := range sums {
		for i := range a.Runs {
			a.SummaryChecks = append(a.SummaryChecks, *analyze.CompareSummary(&a.Runs[i], opt, s))
		}
	}
}
