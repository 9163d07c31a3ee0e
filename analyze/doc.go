// Package analyze reads ceiling traces (Parquet, schema versions 1 and 2, through
// package trace) with Arrow record batches, computes per-level statistics, puts the
// capacity model (package capacity) beside what the server revealed, fits the
// throughput curve and finds the realistic concurrency ceiling. It reads traces only:
// other tools' results are imported before (package importer).
//
// [Analyze] turns traces into an [Analysis], the only contract with the renderers and
// the public JSON. The analysis computes and does not render: package
// analyze/analysistext prints an Analysis as text, Markdown or JSON and package
// report as HTML, from its data alone (a test fails if a file here lays out text).
// Sentences that are part of the data (warnings, evidence, notes, reasons) are
// written here, their numbers by package internal/numfmt as the text's tables
// write them.
//
// The files are named by layer, each using only those above it:
//   - analysis*.go, analyze.go, options.go, labels.go: the contract (the types of
//     the Analysis JSON, whose field comments are its reference, the entry points,
//     the options, the labels its sentences and the renderers share);
//   - load*.go: loading (which columns each pass reads through package trace, the
//     run metadata, integrity of the metadata against the rows and the sidecar,
//     what an imported trace's metadata means);
//   - stats*.go: statistics (per-level passes, percentiles, bootstrap, tails,
//     repeats, errors, server counters, workload, curve fits);
//   - policy_*.go: policy (validity, capacity, KV check, ceilings, decision,
//     what-if, predictions, energy, search verdicts, warnings).
package analyze
