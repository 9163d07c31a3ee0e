// Package analyze reads ceiling traces (Parquet, schema version 1) with Arrow record
// batches, computes per-level statistics, puts the capacity model (package capacity)
// beside what the server revealed, fits the throughput curve and finds the realistic
// concurrency ceiling.
//
// [Analyze] turns traces into an [Analysis], the only contract with the report and the
// public JSON; [Write] prints it as text, Markdown or JSON.
package analyze
