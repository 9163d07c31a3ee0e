// Package trace is the trace format of ceiling (schema version 2; version 1 is still
// read; docs/trace-schema.md): the
// Parquet row of one request attempt, the metrics sidecar's sample, the run
// metadata stored in the file's key-value metadata, the column names, and the
// sealed parts a recording writes while it runs and merges at its end.
//
// A trace is RUN.parquet (one Row per request attempt, the RunInfo JSON under
// MetaRun), with its sidecar RUN.metrics.parquet (MetricSample rows) beside it.
// The recorder and the importers write through this package; analyze reads through
// it (Open, OpenImage, File.Scan: Arrow record batches of bounded size), so the
// format's writing and reading live in one place.
package trace
