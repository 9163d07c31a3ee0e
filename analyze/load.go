package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/ceiling-llm/ceiling/trace"
)

// Loading: traces are read with Arrow record batches of batchRows rows, one batch at
// a time, so memory is bounded by the batch size (and one column chunk's read
// buffer), never by the file size. The column names, metadata keys and metadata
// types are those of package trace, the one definition of the format; the
// Arrow reader is this package's own.

// maxSchemaVersion is the newest trace schema version this package reads.
const maxSchemaVersion = 2

// batchRows is the number of rows per Arrow record batch. 16k rows of 100 chunk gaps
// are about 6.4 MB of gap values.
const batchRows = 16 << 10

// readBufferBytes is the buffered-stream size for column chunks, so that a large
// column chunk is not read into memory whole.
const readBufferBytes = 1 << 20

// colSpec is one trace column and the Arrow type analyze expects it to have.
type colSpec struct {
	name string
	typ  arrow.Type
	list bool // a list whose elements have typ
}

// Short local names of the trace's columns, as levels.go reads them; the names
// themselves are trace's (replace these by trace.Col* when levels.go next changes).
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
	colStatus         = trace.ColStatus
	colError          = trace.ColError
)

// windowColumns are what the first pass (steady-state windows) reads: no chunk gaps,
// so it is cheap.
func windowColumns() []colSpec {
	return []colSpec{
		{trace.ColRunID, arrow.STRING, false},
		{trace.ColLevel, arrow.INT32, false},
		{trace.ColConcurrency, arrow.INT32, false},
		{trace.ColRate, arrow.FLOAT64, false},
		{trace.ColWorker, arrow.INT32, false},
		{trace.ColWarmup, arrow.BOOL, false},
		{trace.ColScheduledNs, arrow.INT64, false},
		{trace.ColSentNs, arrow.INT64, false},
		{trace.ColEndNs, arrow.INT64, false},
	}
}

// statsColumns are what the second pass (per-level statistics) reads.
func statsColumns() []colSpec {
	return append(windowColumns(),
		colSpec{trace.ColFirstTokenNs, arrow.INT64, false},
		colSpec{trace.ColFirstContentNs, arrow.INT64, false},
		colSpec{trace.ColChunkGapsUs, arrow.INT32, true},
		colSpec{trace.ColPromptTokens, arrow.INT32, false},
		colSpec{trace.ColOutputTokens, arrow.INT32, false},
		colSpec{trace.ColTokensSource, arrow.STRING, false},
		colSpec{trace.ColTargetPromptTokens, arrow.INT32, false},
		colSpec{trace.ColStatus, arrow.INT32, false},
		colSpec{trace.ColError, arrow.STRING, false},
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
// this package so that levels.go can give it methods.
type levelMeta trace.LevelInfo

// source is one thing the user named: a trace file or a RUN.parts directory, with
// the files to read and the run metadata found in them.
type source struct {
	name     string   // as the user gave it
	files    []string // trace files (one, or the sealed row parts in order)
	sidecars []string // metrics files: the metrics parts of RUN.parts, else RUN.metrics.parquet
	warnings []string // about the source's files, for the run's warnings
	meta     runMeta
	rawMeta  json.RawMessage // the ceiling.run JSON of the newest file, passed through
}

// partKindMetrics is the kind trace gives a part of scraped metric samples
// in its trace.MetaPart metadata.
const partKindMetrics = "metrics"

// openSource resolves name into the trace files to read and checks that each is a
// ceiling trace this package can read.
func openSource(name string) (*source, error) {
	st, err := checkInputPath(name)
	if err != nil {
		return nil, err
	}
	src := &source{name: name}
	base := name
	var files []string
	if st.IsDir() {
		// RUN.parts: the trace it becomes is RUN.
		if files, err = listParts(name); err != nil {
			return nil, err
		}
		base = strings.TrimSuffix(filepath.Clean(name), trace.PartsDir(""))
	} else {
		files = []string{name}
	}
	// Every file must be a readable ceiling trace; the metadata of the last part
	// (the newest) describes the run, with the level records of all parts merged.
	// The metrics parts of a parts directory are the run's metrics, not rows.
	levels := map[int]levelMeta{}
	for _, f := range files {
		raw, kind, err := readTraceMeta(f)
		if err != nil {
			return nil, err
		}
		if kind == partKindMetrics {
			src.sidecars = append(src.sidecars, f)
		} else {
			src.files = append(src.files, f)
		}
		var m runMeta
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("reading %s: decoding %s metadata: %w", f, trace.MetaRun, err)
			}
		}
		for _, l := range m.Levels {
			levels[l.Level] = l
		}
		src.meta, src.rawMeta = m, raw
	}
	if len(src.files) == 0 {
		return nil, fmt.Errorf("reading %s: only metrics parts, no sealed rows: no level was completed", name)
	}
	// The metrics sidecar of RUN (or of RUN.parts) is beside it; a parts directory
	// with metrics parts has its own, and a sidecar beside it is an earlier run's.
	if side := trace.MetricsPath(base); len(src.sidecars) == 0 {
		if st, err := os.Stat(side); err == nil {
			if st.Mode().IsRegular() {
				src.sidecars = []string{side}
			} else {
				src.warnings = append(src.warnings, fmt.Sprintf("server metrics not read: %s is not a regular file (%s)", side, fileKind(st.Mode())))
			}
		}
	}
	src.meta.Levels = src.meta.Levels[:0]
	for _, l := range levels {
		src.meta.Levels = append(src.meta.Levels, l)
	}
	sort.Slice(src.meta.Levels, func(i, j int) bool { return src.meta.Levels[i].Level < src.meta.Levels[j].Level })
	return src, nil
}

// listParts returns the sealed part files of an interrupted run's RUN.parts
// directory in name order. Parts still being written (*.inprogress) are skipped.
func listParts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var parts []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".parquet") {
			parts = append(parts, filepath.Join(dir, e.Name()))
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("reading %s: no sealed *.parquet parts in the directory", dir)
	}
	sort.Strings(parts)
	return parts, nil
}

// openParquet opens path for reading with a bounded read buffer.
func openParquet(path string) (*file.Reader, error) {
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferBytes
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("reading %s: not a readable Parquet file (truncated or corrupt?): %w", path, err)
	}
	return rdr, nil
}

// readTraceMeta checks that path is a ceiling trace (or part) of a schema version
// this package reads and returns its ceiling.run metadata JSON (nil when absent) and,
// for a part, its kind (trace.MetaPart).
func readTraceMeta(path string) (json.RawMessage, string, error) {
	rdr, err := openParquet(path)
	if err != nil {
		return nil, "", err
	}
	defer rdr.Close()
	raw, err := checkTraceMeta(path, rdr)
	if err != nil {
		return nil, "", err
	}
	var part struct {
		Kind string `json:"kind"`
	}
	if v := rdr.MetaData().KeyValueMetadata().FindValue(trace.MetaPart); v != nil {
		_ = json.Unmarshal([]byte(*v), &part) // a part without a readable kind is read as rows
	}
	return raw, part.Kind, nil
}

func checkTraceMeta(path string, rdr *file.Reader) (json.RawMessage, error) {
	kv := rdr.MetaData().KeyValueMetadata()
	v := kv.FindValue(trace.MetaSchemaVersion)
	if v == nil {
		return nil, fmt.Errorf("reading %s: not a ceiling trace (no %s in the file metadata)", path, trace.MetaSchemaVersion)
	}
	n, err := strconv.Atoi(strings.TrimSpace(*v))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("reading %s: invalid %s %q", path, trace.MetaSchemaVersion, *v)
	}
	if n > maxSchemaVersion {
		return nil, fmt.Errorf("reading %s: trace schema version %d is newer than this ceiling reads (%d); upgrade ceiling", path, n, maxSchemaVersion)
	}
	if r := kv.FindValue(trace.MetaRun); r != nil && *r != "" {
		if !json.Valid([]byte(*r)) {
			return nil, fmt.Errorf("reading %s: %s metadata is not valid JSON", path, trace.MetaRun)
		}
		return json.RawMessage(*r), nil
	}
	return nil, nil
}

// batchFunc receives one record batch; cols maps column name to its index in rec.
type batchFunc func(rec arrow.Record, cols map[string]int) error

// scanTrace streams the given columns of the trace at path in record batches.
func scanTrace(ctx context.Context, path string, want []colSpec, fn batchFunc) (err error) {
	rdr, err := openParquet(path)
	if err != nil {
		return err
	}
	defer rdr.Close()
	if _, err := checkTraceMeta(path, rdr); err != nil {
		return err
	}
	// Arrow panics on some malformed inputs; bad input must give an error naming the
	// file, never a crash.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reading %s: malformed trace: %v", path, p)
		}
	}()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	var leaves []int
	for _, c := range want {
		idx, err := fieldLeaves(path, fr.Manifest, c)
		if err != nil {
			return err
		}
		leaves = append(leaves, idx...)
	}
	if rdr.NumRowGroups() == 0 {
		return nil
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer rr.Release()
	cols := map[string]int{}
	for i, f := range rr.Schema().Fields() {
		cols[f.Name] = i
	}
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(rr.Record(), cols); err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("reading %s: %w (truncated or corrupt file?)", path, err)
	}
	return ctx.Err()
}

// fieldLeaves finds the top-level column c in the file and returns its leaf column
// indices, checking its type.
func fieldLeaves(path string, m *pqarrow.SchemaManifest, c colSpec) ([]int, error) {
	for _, f := range m.Fields {
		if f.Field.Name != c.name {
			continue
		}
		t := f.Field.Type
		if c.list {
			lt, ok := t.(*arrow.ListType)
			if !ok || lt.Elem().ID() != c.typ || len(f.Children) != 1 || !f.Children[0].IsLeaf() {
				return nil, fmt.Errorf("reading %s: column %s has type %s, want list<%s>", path, c.name, t, strings.ToLower(c.typ.String()))
			}
			return []int{f.Children[0].ColIndex}, nil
		}
		if t.ID() != c.typ || !f.IsLeaf() {
			return nil, fmt.Errorf("reading %s: column %s has type %s, want %s", path, c.name, t, strings.ToLower(c.typ.String()))
		}
		return []int{f.ColIndex}, nil
	}
	return nil, fmt.Errorf("reading %s: not a ceiling trace of schema version 1 or 2: column %s is missing", path, c.name)
}

// column returns the column named name of rec as type T. The loader checked the
// types already, so a mismatch is an internal error, reported rather than panicking.
func column[T arrow.Array](rec arrow.Record, cols map[string]int, name string) (T, error) {
	var zero T
	i, ok := cols[name]
	if !ok {
		return zero, fmt.Errorf("column %s is missing", name)
	}
	a, ok := rec.Column(i).(T)
	if !ok {
		return zero, fmt.Errorf("column %s has type %s", name, rec.Column(i).DataType())
	}
	return a, nil
}

// sidecar columns (RUN.metrics.parquet).
func metricColumns() []colSpec {
	return []colSpec{
		{trace.SampleTsNs, arrow.INT64, false},
		{trace.SampleName, arrow.STRING, false},
		{trace.SampleLabels, arrow.STRING, false},
		{trace.SampleValue, arrow.FLOAT64, false},
	}
}

// metricPoint is one scraped value.
type metricPoint struct {
	ts    int64
	value float64
}

// loadMetrics reads the interesting series of a metrics file (a sidecar or a
// metrics part) and the run it says it belongs to. The file is small (one row per
// series per scrape), and only the selected series are kept.
func loadMetrics(ctx context.Context, path string) (sidecarPoints, error) {
	sp := sidecarPoints{path: path, series: map[[2]string][]metricPoint{}, counters: map[int64][]counterSample{}}
	rdr, err := openParquet(path)
	if err != nil {
		return sp, err
	}
	defer rdr.Close()
	sp.runID = sidecarRunID(rdr)
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		return sp, fmt.Errorf("reading %s: %w", path, err)
	}
	var leaves []int
	for _, c := range metricColumns() {
		idx, err := fieldLeaves(path, fr.Manifest, c)
		if err != nil {
			return sp, err
		}
		leaves = append(leaves, idx...)
	}
	if rdr.NumRowGroups() == 0 {
		return sp, nil
	}
	rr, err := fr.GetRecordReader(ctx, leaves, nil)
	if err != nil {
		return sp, fmt.Errorf("reading %s: %w", path, err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.Record()
		ts := rec.Column(0).(*array.Int64)
		name := rec.Column(1).(*array.String)
		labels := rec.Column(2).(*array.String)
		val := rec.Column(3).(*array.Float64)
		for i := 0; i < int(rec.NumRows()); i++ {
			n := name.Value(i)
			if isGPUMetric(n) {
				sp.gpu = append(sp.gpu, gpuSample{ts.Value(i), strings.Clone(n), strings.Clone(labels.Value(i)), val.Value(i)})
				continue
			}
			if isServerCounter(n) {
				sp.counters[ts.Value(i)] = append(sp.counters[ts.Value(i)], counterSample{strings.Clone(n), strings.Clone(labels.Value(i)), val.Value(i)})
			}
			if metricKind(n) == "" {
				continue
			}
			k := [2]string{n, labels.Value(i)}
			pts, ok := sp.series[k]
			if !ok {
				// The key outlives the record batch its strings point into.
				k = [2]string{strings.Clone(k[0]), strings.Clone(k[1])}
			}
			sp.series[k] = append(pts, metricPoint{ts.Value(i), val.Value(i)})
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return sp, fmt.Errorf("reading %s: %w", path, err)
	}
	return sp, nil
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
