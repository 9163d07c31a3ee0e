package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/importer/importanalysis"
	"github.com/ceiling-llm/ceiling/trace"
)

// analyzeInputs analyzes what analyze, report and whatif are given: ceiling traces
// are read as they are; other tools' result files are imported in memory first,
// one run per sweep (files of one tool make one run only when model, server and
// workload agree; otherwise they are separate runs, side by side). Every imported
// run, converted now or earlier by `ceiling import`, is compared with the tool's
// own summary numbers. Two or more shard traces of one sweep are merged first
// (shardinputs.go), the merge's findings printed to warn.
func analyzeInputs(ctx context.Context, names []string, opt analyze.Options, warn io.Writer) (*analyze.Analysis, error) {
	if len(names) == 0 {
		return nil, errors.New("analyze: no trace given")
	}
	// The declared deployment is computed once for every run (config.json parsed once).
	if err := opt.Prepare(); err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", names[0], err)
	}
	inputs, err := importer.Inputs(names)
	if err != nil {
		return nil, err
	}
	var traces []string
	for _, in := range inputs {
		if in.Tool == "" {
			traces = append(traces, in.Files[0])
		}
	}
	shards, err := shardGroups(traces, opt.IgnoreCorrupt)
	if err != nil {
		return nil, err
	}
	a := &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{}}
	done := map[string]bool{} // shard runs already merged and analyzed
	for _, in := range inputs {
		if in.Tool == "" {
			if id := shardRunOf(shards, in.Files[0]); id != "" {
				if !done[id] {
					done[id] = true
					runs, err := analyzeShards(ctx, shards[id], opt, warn)
					if err != nil {
						return nil, err
					}
					a.Runs = append(a.Runs, runs...)
				}
				continue
			}
			runs, err := analyzeTrace(ctx, in.Files[0], opt)
			if err != nil {
				return nil, err
			}
			a.Runs = append(a.Runs, runs...)
			continue
		}
		imported, err := importer.ImportRuns(ctx, in.Files, importer.Options{From: in.Tool})
		if err != nil {
			return nil, err
		}
		for _, run := range imported {
			runs, err := importanalysis.Analyze(ctx, run, importer.WriteOptions{Version: version}, opt)
			if err != nil {
				return nil, err
			}
			a.Runs = append(a.Runs, runs...)
		}
	}
	return a, nil
}

// analyzeTrace analyzes the trace file or RUN.parts directory name; an imported
// trace is compared with its tool's own summary.
func analyzeTrace(ctx context.Context, name string, opt analyze.Options) ([]analyze.Run, error) {
	src, err := openTrace(name, opt.IgnoreCorrupt)
	if err != nil {
		return nil, err
	}
	a, err := analyze.AnalyzeSources(ctx, []*trace.Source{src}, opt)
	if err != nil {
		return nil, err
	}
	importanalysis.CompareAnalysis(a.Runs, src.Info)
	return a.Runs, nil
}

// openTrace opens the trace file or RUN.parts directory name; with salvage
// (--ignore-corrupt) the corrupt parts of a RUN.parts directory are left out with
// a warning naming each, as analyze.Analyze does, instead of losing the whole run.
func openTrace(name string, salvage bool) (*trace.Source, error) {
	if salvage {
		return trace.OpenSalvage(name)
	}
	return trace.Open(name)
}

// analyzeGiven is what analyze and report do with the names given: it sets
// summary-level points and a planner's predictions apart, analyzes the measured
// runs (analyzeInputs) and sets the others beside them. ok is false when the
// command stops with code, after saying why.
func analyzeGiven(ctx context.Context, e env, h help, names, predicted []string, opt analyze.Options) (a *analyze.Analysis, code int, ok bool) {
	args, sums, err := splitSummaries(names)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling %s: %s\n", h.name, errText(err))
		return nil, exitFailed, false
	}
	runs, preds, err := splitPredictions(args, predicted)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling %s: %s\n", h.name, errText(err))
		return nil, exitFailed, false
	}
	if len(runs) == 0 && len(sums) > 0 && len(preds) == 0 {
		return nil, h.usageError(e, "no measured run given: summary-level points (an llm-d report, InferenceX results, a CSV of published levels) are set beside a measured run; they hold no requests to analyze (to predict another deployment from them: ceiling whatif POINTS --gpu ...)"), false
	}
	if len(runs) == 0 {
		return nil, h.usageError(e, "no measured run given: a planner's predictions are shown beside a measured run"), false
	}
	a, err = analyzeInputs(ctx, runs, opt, e.stderr)
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling %s: %s\n", h.name, errText(flagError(err)))
		return nil, exitFailed, false
	}
	attachPredictions(a, opt, preds)
	attachSummaries(a, opt, sums)
	return a, exitOK, true
}
