package analyze

import (
	"context"
	"encoding/json"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/ceiling-llm/ceiling/trace"
)

// Loading: traces are read through package trace, the one definition of the
// format and its Arrow reader (record batches of bounded size, so memory never
// grows with the file). This file says which columns each pass reads and turns
// the run metadata into this package's types.

// colSpec is one trace column and the Arrow type analyze expects it to have.
type colSpec = trace.Column

// Short local names of the trace's columns, as stats_levels.go reads them; the names
// themselves are trace's (replace these by trace.Col* when stats_levels.go next changes).
const (
	colRunID          = trace.ColRunID
	colLevel          = trace.ColLevel
	colConcurrency    = trace.ColConcurrency
	colRate           = trace.ColRate
	colWorker         = trace.ColWorker
	colWarmup         = trace.ColWarmup
	colScheduledNs    = trace.ColScheduledNs
	colSentNs         = trace.ColSentNs
	colFirstTokenNs   = trace.ColFirstTokenNs
	colFirstContentNs = trace.ColFirstContentNs
	colEndNs          = trace.ColEndNs
	colChunkGapsUs    = trace.ColChunkGapsUs
	colPromptTokens   = trace.ColPromptTokens
	colOutputTokens   = trace.ColOutputTokens
	colTokensSource   = trace.ColTokensSource
	colTargetPrompt   = trace.ColTargetPromptTokens
	colMaxTokens      = trace.ColMaxTokens
	colStatus         = trace.ColStatus
	colError          = trace.ColError
)

// windowColumns are what the first pass (steady-state windows) reads: no chunk gaps,
// so it is cheap.
func windowColumns() []colSpec {
	return []colSpec{
		{Name: trace.ColRunID, Type: arrow.STRING, List: false},
		{Name: trace.ColLevel, Type: arrow.INT32, List: false},
		{Name: trace.ColConcurrency, Type: arrow.INT32, List: false},
		{Name: trace.ColRate, Type: arrow.FLOAT64, List: false},
		{Name: trace.ColWorker, Type: arrow.INT32, List: false},
		{Name: trace.ColWarmup, Type: arrow.BOOL, List: false},
		{Name: trace.ColScheduledNs, Type: arrow.INT64, List: false},
		{Name: trace.ColSentNs, Type: arrow.INT64, List: false},
		{Name: trace.ColEndNs, Type: arrow.INT64, List: false},
	}
}

// statsColumns are what the second pass (per-level statistics) reads.
func statsColumns() []colSpec {
	return append(windowColumns(),
		colSpec{Name: trace.ColFirstTokenNs, Type: arrow.INT64, List: false},
		colSpec{Name: trace.ColFirstContentNs, Type: arrow.INT64, List: false},
		colSpec{Name: trace.ColChunkGapsUs, Type: arrow.INT32, List: true},
		colSpec{Name: trace.ColPromptTokens, Type: arrow.INT32, List: false},
		colSpec{Name: trace.ColOutputTokens, Type: arrow.INT32, List: false},
		colSpec{Name: trace.ColTokensSource, Type: arrow.STRING, List: false},
		colSpec{Name: trace.ColTargetPromptTokens, Type: arrow.INT32, List: false},
		colSpec{Name: trace.ColMaxTokens, Type: arrow.INT32, List: false},
		colSpec{Name: trace.ColStatus, Type: arrow.INT32, List: false},
		colSpec{Name: trace.ColError, Type: arrow.STRING, List: false},
	)
}

// runMeta is the trace.MetaRun JSON as analyze holds it: trace.RunInfo, with the
// server object also kept raw (the analysis passes it through as the recorder wrote
// it, fields this version does not know included) and the levels as levelMeta.
type runMeta struct {
	trace.RunInfo
	Server json.RawMessage `json:"server"`
	Levels []levelMeta     `json:"levels"`
}

// serverMeta is what the server revealed about itself.
type serverMeta = trace.ServerInfo

// levelMeta is how the recorder says one level ran: trace.LevelInfo, as a type of
// this package so that stats_levels.go can give it methods.
type levelMeta trace.LevelInfo

// source is one trace to analyze, with its run metadata as analyze holds it.
type source struct {
	name     string       // as the user gave it
	files    []trace.File // trace files (one, or the sealed row parts in order)
	sidecars []trace.File // metrics files: the metrics parts of RUN.parts, else RUN.metrics.parquet
	warnings []string     // about the source's files, for the run's warnings
	meta     runMeta
	rawMeta  json.RawMessage // the ceiling.run JSON of the newest file, passed through
}

// newSource is the trace ts as analyze reads it.
func newSource(ts *trace.Source) *source {
	src := &source{name: ts.Name, files: ts.Files, sidecars: ts.Sidecars, warnings: ts.Warnings, rawMeta: ts.RawInfo}
	src.meta.RunInfo = ts.Info
	src.meta.Server = ts.Server
	src.meta.Levels = make([]levelMeta, len(ts.Info.Levels))
	for i, l := range ts.Info.Levels {
		src.meta.Levels[i] = levelMeta(l)
	}
	src.meta.RunInfo.Levels = nil
	return src
}

// batchFunc receives one record batch; cols maps column name to its index in rec.
type batchFunc = trace.BatchFunc

// scanTrace streams the given columns of the trace file f in record batches.
func scanTrace(ctx context.Context, f trace.File, want []colSpec, fn batchFunc) error {
	return f.Scan(ctx, want, fn)
}

// column returns the column named name of rec as type T.
func column[T arrow.Array](rec arrow.Record, cols map[string]int, name string) (T, error) {
	return trace.Col[T](rec, cols, name)
}

// metricPoint is one scraped value.
type metricPoint struct {
	ts    int64
	value float64
}

// loadMetrics reads the interesting series of a metrics file (a sidecar or a
// metrics part) and the run it says it belongs to. Only the selected series are
// kept, at most limit samples of them (0 = maxSidecarSamples), each name and
// label text held once, GPU values out of range left out (load_metricsbound.go).
func loadMetrics(ctx context.Context, f trace.File, limit int) (sidecarPoints, error) {
	if limit <= 0 {
		limit = maxSidecarSamples
	}
	sp := sidecarPoints{path: f.Name, series: map[[2]string][]metricPoint{}, counters: map[int64][]counterSample{}}
	strs := metricStrings{}
	var notes metricNotes
	kept := 0
	runID, err := f.ScanSamples(ctx, func(ts int64, n, labels string, v float64) {
		gpu, counter, kind := isGPUMetric(n), isServerCounter(n), metricKind(n)
		if !gpu && !counter && kind == "" {
			return
		}
		if kept >= limit {
			notes.dropped++
			return
		}
		kept++
		if gpu {
			if !gpuValueOK(n, v) {
				notes.outside(strs.get(n), strs.get(labels), v)
				return
			}
			sp.gpu = append(sp.gpu, gpuSample{ts: ts, name: strs.get(n), labels: strs.get(labels), value: v})
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			notes.notANumber(strs.get(n))
			return
		}
		if counter {
			sp.counters[ts] = append(sp.counters[ts], counterSample{strs.get(n), strs.get(labels), v})
		}
		if kind == "" {
			return
		}
		k := [2]string{strs.get(n), strs.get(labels)}
		sp.series[k] = append(sp.series[k], metricPoint{ts, v})
	})
	sp.runID = runID
	sp.notes = notes.warnings(f.Name, limit)
	return sp, err
}

// metricKind says whether a server metric is worth plotting: "gauge" for running,
// waiting and KV-usage gauges, "counter" for token counters (shown as rates), "" for
// everything else.
func metricKind(name string) string {
	n := strings.ToLower(name)
	if strings.HasSuffix(n, "_created") || strings.HasSuffix(n, "_bucket") {
		return ""
	}
	for _, g := range []string{"num_requests_running", "num_requests_waiting", "num_running_reqs",
		"num_queue_reqs", "cache_usage", "token_usage", "requests_processing", "requests_deferred",
		"kv_cache_usage"} {
		if strings.Contains(n, g) {
			return "gauge"
		}
	}
	if strings.Contains(n, "tokens") && (strings.HasSuffix(n, "_total") || strings.HasSuffix(n, "tokens_predicted")) {
		return "counter"
	}
	return ""
}
