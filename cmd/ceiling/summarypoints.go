package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/spf13/pflag"
)

// splitSummaries separates the summary-level files given as runs (an llm-d
// benchmark report, InferenceX points, a CSV of published levels) from the rest
// and reads them: they hold no requests to analyze, and are set beside the
// measured runs instead.
func splitSummaries(args []string) (rest []string, sums []*importer.Summary, err error) {
	for _, a := range args {
		if strings.EqualFold(filepath.Ext(a), ".csv") && isPublishedLevels(a) {
			s, err := importer.ReadSummaryCSV(a)
			if err != nil {
				return nil, nil, err
			}
			sums = append(sums, s)
			continue
		}
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

// isPublishedLevels says whether a CSV given to analyze or report is a table of
// published levels: one a planner's table header does not claim (those are
// predictions, as they have always been here). A trace is never a CSV; read as
// Parquet, the table would be called corrupt.
func isPublishedLevels(path string) bool {
	_, err := importer.DetectPrediction(path)
	return errors.Is(err, importer.ErrNotPrediction)
}

// attachSummaries sets every summary-level file beside every measured run of a.
func attachSummaries(a *analyze.Analysis, opt analyze.Options, sums []*importer.Summary) {
	for _, s := range sums {
		for i := range a.Runs {
			a.SummaryChecks = append(a.SummaryChecks, *analyze.CompareSummary(&a.Runs[i], opt, s))
		}
	}
}

// readSummaryPoints reads path as published summary points when it is some: a
// CSV of levels (by its .csv name: its header is shared with planner tables, so
// the content cannot tell) or an InferenceX result. nil, nil for anything else (a
// trace, another tool's result), which the run reader then takes. The points must
// be one configuration: a what-if has one measured deployment.
func readSummaryPoints(path string) (*importer.Summary, error) {
	var s *importer.Summary
	var err error
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		s, err = importer.ReadSummaryCSV(path)
	} else if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
		if tool, derr := importer.Detect(path); derr == nil && importer.IsSummaryLevel(tool) {
			s, err = importer.ReadSummary(path)
		}
	}
	if err != nil || s == nil {
		return nil, err
	}
	configs := map[string]bool{}
	for _, p := range s.Points {
		configs[pointConfig(p)] = true
	}
	if len(configs) > 1 {
		var names []string
		for c := range configs {
			names = append(names, c)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s holds %d configurations (%s): a what-if starts from one deployment; give a file of one", path, len(names), strings.Join(names, "; "))
	}
	return s, nil
}

// pointConfig names the configuration a summary point was measured in, from what
// the point says of it.
func pointConfig(p importer.SummaryPoint) string {
	var parts []string
	for _, f := range []struct{ k, v string }{{"model", p.Model}, {"gpu", p.GPU}, {"precision", p.Precision}, {"framework", p.Framework}} {
		if f.v != "" {
			parts = append(parts, f.k+" "+f.v)
		}
	}
	if p.GPUs > 0 {
		parts = append(parts, fmt.Sprintf("%d GPUs", p.GPUs))
	}
	if p.InputTokens != nil && p.OutputTokens != nil {
		parts = append(parts, fmt.Sprintf("%g/%g tokens", *p.InputTokens, *p.OutputTokens))
	}
	if len(parts) == 0 {
		return "unnamed"
	}
	return strings.Join(parts, ", ")
}

// fillPointLengths gives the published levels that lack request lengths the ones
// the user gave (--points-input-tokens, --points-output-tokens); a length the
// file gives is kept, and one given beside it that differs is refused.
func fillPointLengths(fs *pflag.FlagSet, s *importer.Summary, in, out float64) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"points-input-tokens", in}, {"points-output-tokens", out}} {
		if fs.Changed(f.name) && (math.IsNaN(f.v) || f.v < 1 || f.v > capacity.MaxContextTokens) {
			return fmt.Errorf("--%s must be from 1 to %d, got %g", f.name, int64(capacity.MaxContextTokens), f.v)
		}
	}
	for i := range s.Points {
		p := &s.Points[i]
		for _, f := range []struct {
			name string
			v    float64
			dst  **float64
		}{{"points-input-tokens", in, &p.InputTokens}, {"points-output-tokens", out, &p.OutputTokens}} {
			switch {
			case !fs.Changed(f.name):
			case *f.dst == nil:
				*f.dst = &f.v
			case **f.dst != f.v:
				return fmt.Errorf("--%s %g: %s gives %g", f.name, f.v, p.Label, **f.dst)
			}
		}
	}
	return nil
}
