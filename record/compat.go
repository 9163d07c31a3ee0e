package record

import "github.com/ceiling-llm/ceiling/record/trace"

// The trace format moved to package record/trace. These aliases keep the packages
// that still name it through record (analyze's tests and test trace generator)
// compiling; once they import record/trace, this file goes.

// Deprecated: use trace.Row.
type Row = trace.Row

// Deprecated: use trace.MetricSample.
type MetricSample = trace.MetricSample

// Deprecated: use trace.RunInfo.
type RunInfo = trace.RunInfo

// Deprecated: use trace.Target.
type Target = trace.Target

// Deprecated: use trace.Plan.
type Plan = trace.Plan

// Deprecated: use trace.ServerInfo.
type ServerInfo = trace.ServerInfo

// Deprecated: use trace.LevelInfo.
type LevelInfo = trace.LevelInfo

// Deprecated: use trace.Declared.
type Declared = trace.Declared

// Deprecated: use the trace package's constants.
const (
	SchemaVersion     = trace.SchemaVersion
	MetaSchemaVersion = trace.MetaSchemaVersion
	MetaRun           = trace.MetaRun
)

// WriteFile writes a complete trace file atomically.
//
// Deprecated: use trace.WriteFile.
func WriteFile(path string, info RunInfo, rows []Row) error {
	return trace.WriteFile(path, info, rows)
}
