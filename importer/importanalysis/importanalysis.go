// Package importanalysis analyzes imported runs: it runs the analysis on an
// imported run's trace image in memory and compares the analysis with the tool's
// own summary numbers the trace keeps (LevelInfo.References). It sits above both
// importer and analyze, so that reading other tools' files (package importer) does
// not depend on the analysis and the analysis (package analyze) reads traces only.
package importanalysis

import (
	"context"
	"fmt"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/trace"
)

// Analyze analyzes run from its trace image in memory (nothing is written to disk)
// and compares the analysis with the tool's own summary (CompareAnalysis).
func Analyze(ctx context.Context, run *importer.Run, wopt importer.WriteOptions, opt analyze.Options) ([]analyze.Run, error) {
	image, err := importer.Image(run, wopt)
	if err != nil {
		return nil, err
	}
	name := run.Files[0]
	if len(run.Files) > 1 {
		name = fmt.Sprintf("%s and %d more files", run.Files[0], len(run.Files)-1)
	}
	src, err := trace.OpenImage(name, image)
	if err != nil {
		return nil, err
	}
	a, err := analyze.AnalyzeSources(ctx, []*trace.Source{src}, opt)
	if err != nil {
		return nil, err
	}
	CompareAnalysis(a.Runs, src.Info)
	return a.Runs, nil
}

// CompareAnalysis compares the analysis of an imported trace (runs, from the trace
// whose metadata is info) with the references its metadata keeps, level by level:
// it sets the run's SourceComparison and adds the differences to its warnings.
// Runs of a trace ceiling recorded (no info.Source) are left as they are. Only
// the run the metadata describes is compared (a file may hold concatenated runs).
func CompareAnalysis(runs []analyze.Run, info trace.RunInfo) {
	if info.Source == nil {
		return
	}
	for i := range runs {
		r := &runs[i]
		if r.RunID != info.RunID && len(runs) > 1 {
			continue
		}
		byLevel := map[int]trace.LevelInfo{}
		for _, m := range info.Levels {
			byLevel[m.Level] = m
		}
		analyzed := map[int]analyze.Level{}
		var levels []trace.LevelInfo
		for _, lv := range r.Levels {
			if m, ok := byLevel[lv.Level]; ok {
				levels = append(levels, m)
				analyzed[lv.Level] = lv
			}
		}
		c, ws := importer.CompareRun(info.Source.Tool, levels, func(level int, metric, stat string) (float64, bool) {
			return analyzed[level].Stat(metric, stat)
		})
		if c == nil {
			continue
		}
		r.SourceComparison = c
		r.Warnings = append(r.Warnings, ws...)
	}
}
