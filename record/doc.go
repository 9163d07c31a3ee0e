// Package record runs a concurrency sweep against an OpenAI-compatible server and
// writes one Parquet row per request attempt (the trace format of package trace), plus a sidecar of the server's Prometheus
// metrics. Record is the entry point; Options says what to record.
package record
