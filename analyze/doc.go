// Package analyze reads ceiling traces (Parquet, schema versions 1 and 2, through
// package trace) with Arrow record batches, computes per-level statistics, puts the
// capacity model (package capacity) beside what the server revealed, fits the
// throughput curve and finds the realistic concurrency ceiling. It reads traces only:
// other tools' results are imported before (package importer).
//
// [Analyze] turns traces into an [Analysis], the only contract with the report and the
// public JSON; [Write] prints it as text, Markdown or JSON.
package analyze
