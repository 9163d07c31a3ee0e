// Package compare tells whether a candidate deployment differs from a baseline by
// more than noise, and whether it regressed: the question a deployment review and
// a CI gate ask of two recorded runs (a new engine version, another quantization,
// a changed flag).
//
// It consumes analyze.Analysis runs, one or several repeats per side. Levels are
// matched by offered concurrency (or rate, in open loop); at each matched level
// and at the realistic ceiling every metric's difference, candidate ÷ baseline − 1,
// gets a 95% interval and a test (diff.go). The variance comes from the analysis'
// own resampling when each side is one run (the block bootstrap over time within
// each level, drawn independently on each side), and from the spread between
// repeats when a side has several (repeats are then the unit, since run-to-run
// variance usually dominates on real GPUs). A declared set of metrics is gated
// (gate.go), Holm's step-down correction holds the chance of any false alarm over
// the gated tests to 5%, and a regression is a gated worsening both significant
// and beyond a practical threshold. docs/compare.md describes the method, the JSON
// schema and the measured false-alarm rate and power.
package compare
