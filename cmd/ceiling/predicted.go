package main

import (
	"encoding/json"
	"strings"

	"errors"
	"fmt"
	"github.com/ceiling-llm/ceiling/internal/atomicfile"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/importer"
	"github.com/spf13/pflag"
)

// addPredictedFlag adds --predicted to analyze and report.
func addPredictedFlag(fs *pflag.FlagSet) *[]string {
	return fs.StringArray("predicted", nil, "a planner's predictions to set beside the measured runs: an AIConfigurator pareto.csv or best_config_topn.csv, or ceiling's planner CSV/JSON (docs/predictions.md); repeatable. A planner file given as a run is read the same way")
}

// splitPredictions separates planner files from the runs given as arguments, and
// reads them with those given by --predicted.
func splitPredictions(args, flagged []string) (runs []string, preds []*importer.Prediction, err error) {
	for _, a := range args {
		if _, derr := importer.DetectPrediction(a); derr == nil {
			flagged = append(flagged, a)
			continue
		} else if !errors.Is(derr, importer.ErrNotPrediction) {
			// Not readable as a planner file: leave it to the run's reader, whose
			// error names the problem.
		}
		runs = append(runs, a)
	}
	for _, f := range flagged {
		p, err := importer.ReadPrediction(f)
		if err != nil {
			return nil, nil, fmt.Errorf("--predicted: %w", err)
		}
		preds = append(preds, p)
	}
	return runs, preds, nil
}

// attachPredictions sets every prediction beside every measured run of a, and
// compares the runs and predictions at the same per-user speeds.
func attachPredictions(a *analyze.Analysis, opt analyze.Options, preds []*importer.Prediction) {
	for _, p := range preds {
		for i := range a.Runs {
			pc := analyze.ComparePrediction(&a.Runs[i], opt, p)
			if pc.Mismatch != "" {
				// Not silently: a planner file of another deployment is named in
				// the analysis's warnings, not only beside its table.
				a.Runs[i].Warnings = append(a.Runs[i].Warnings, fmt.Sprintf("--predicted %s beside run %s: %s", pc.Source, a.Runs[i].RunID, flagError(errors.New(pc.Mismatch))))
			}
			a.Predictions = append(a.Predictions, *pc)
		}
	}
	a.MatchedSpeed = analyze.MatchSpeeds(a, opt.Decision.GPUHourCost)
}

// importPrediction handles `ceiling import` of planner files: they become ceiling's
// planner JSON (a predicted run), never a trace. done is false when the files are
// not a planner's.
func importPrediction(e env, files []string, out string) (code int, done bool) {
	var preds []*importer.Prediction
	for _, f := range files {
		if _, err := importer.DetectPrediction(f); err != nil {
			if len(preds) > 0 {
				fmt.Fprintf(e.stderr, "ceiling import: %s is not a planner's prediction but %s is: import predictions and benchmark results separately\n", f, preds[0].Files[0])
				return exitFailed, true
			}
			return 0, false
		}
		p, err := importer.ReadPrediction(f)
		if err != nil {
			fmt.Fprintf(e.stderr, "ceiling import: %s\n", errText(err))
			return exitFailed, true
		}
		preds = append(preds, p)
	}
	if len(preds) != 1 {
		fmt.Fprintf(e.stderr, "ceiling import: give one planner file at a time (%d given): each is one predicted run\n", len(preds))
		return exitUsage, true
	}
	if strings.HasSuffix(strings.ToLower(out), ".parquet") {
		fmt.Fprintf(e.stderr, "ceiling import: %s holds predictions, not measured requests: write it as JSON (-o NAME.json) and give it to analyze or report with --predicted\n", files[0])
		return exitUsage, true
	}
	data, err := json.MarshalIndent(preds[0], "", "  ")
	if err == nil {
		err = atomicfile.WriteBytes(out, append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "ceiling import: %s\n", errText(err))
		return exitFailed, true
	}
	p := preds[0]
	fmt.Fprintf(e.stderr, "ceiling import: read %s (%s): %d PREDICTED points, wrote %s (predictions, not measurements)\n", files[0], p.Planner, len(p.Points), out)
	return exitOK, true
}
