// Package analyze reads ceiling traces (Parquet, schema version 1) with Arrow record
// batches, computes per-level statistics, models the KV-cache and memory budget of a
// deployment, fits the throughput curve and finds the realistic concurrency ceiling.
package analyze
