package importer

import (
	"context"
	"fmt"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// Analysis of imported runs: package analyze reads traces only, so an imported run
// is analyzed from its trace image in memory, and the analysis is then compared
// with the tool's own summary numbers the trace keeps (LevelInfo.References).

// Analyze analyzes run from its trace image in memory (nothing is written to disk)
// and compares the analysis with the tool's own summary (CompareAnalysis).
func Analyze(ctx context.Context, run *Run, wopt WriteOptions, opt analyze.Options) ([]analyze.Run, error) {
	image, err := Image(run, wopt)
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
		c, ws := CompareRun(info.Source.Tool, levels, func(level int, metric, stat string) (float64, bool) {
			return analyzed[level].Stat(metric, stat)
		})
		if c == nil {
			continue
		}
		r.SourceComparison = c
		r.Warnings = append(r.Warnings, ws...)
	}
}
