package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/parquet-go/parquet-go"
)

// PartsDir is where the parts of the trace at path are sealed while recording.
func PartsDir(path string) string { return path + ".parts" }

// MetricsPath is the sidecar of the trace at path.
func MetricsPath(path string) string {
	return strings.TrimSuffix(path, ".parquet") + ".metrics.parquet"
}

// WriteFile writes rows and info as one complete trace file at path, atomically. It is
// the simplest writer, for small files, importers and tests; the recorder seals parts.
func WriteFile(path string, info RunInfo, rows []Row) error {
	return writeParquet(path, info, validRows(rows), "")
}

// Write writes rows and info as one complete trace to w: the image of the file
// WriteFile writes (an importer makes a trace in memory with it).
func Write(w io.Writer, info RunInfo, rows []Row) error {
	pw, err := newWriter[Row](w, info, "")
	if err != nil {
		return err
	}
	if _, err := pw.Write(validRows(rows)); err != nil {
		return err
	}
	return pw.Close()
}

// ReadFile reads a whole trace (or one part) written by this package: its run info
// and rows. It is for small files and tests; analyze streams traces instead.
func ReadFile(path string) (RunInfo, []Row, error) {
	info, _, _, err := readMeta(path)
	if err != nil {
		return info, nil, err
	}
	rows, err := readAll[Row](path)
	return info, rows, err
}

// newWriter starts a Parquet file of T rows carrying the schema version and info,
// and part as MetaPart ("" = not a part). Its Close adds the checksum (MetaDigest)
// of the rows written and of that metadata.
func newWriter[T any](w io.Writer, info RunInfo, part string, opts ...parquet.WriterOption) (*traceWriter[T], error) {
	runJSON, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encoding run info: %w", err)
	}
	runID := strings.ToValidUTF8(info.RunID, "\uFFFD")
	opts = append([]parquet.WriterOption{
		parquet.KeyValueMetadata(MetaSchemaVersion, SchemaVersion),
		parquet.KeyValueMetadata(MetaRun, string(runJSON)),
		parquet.KeyValueMetadata(MetaRunID, runID),
		parquet.Compression(&parquet.Zstd),
	}, opts...)
	if part != "" {
		opts = append(opts, parquet.KeyValueMetadata(MetaPart, part))
	}
	return &traceWriter[T]{GenericWriter: parquet.NewGenericWriter[T](w, opts...), digest: digesterOf[T](),
		meta: metaDigest(string(runJSON), part, runID)}, nil
}

// traceWriter is a Parquet writer that adds the checksum of what it wrote.
type traceWriter[T any] struct {
	*parquet.GenericWriter[T]
	digest *rowDigester
	meta   string
}

// Write writes rows and adds them to the checksum.
func (w *traceWriter[T]) Write(rows []T) (int, error) {
	n, err := w.GenericWriter.Write(rows)
	addRows(w.digest, rows[:n])
	return n, err
}

// Close writes the checksum into the footer and ends the file.
func (w *traceWriter[T]) Close() error {
	fd, err := json.Marshal(w.digest.digest(w.meta))
	if err != nil {
		return err
	}
	w.SetKeyValueMetadata(MetaDigest, string(fd))
	return w.GenericWriter.Close()
}

// writeParquet writes rows as one file at path, atomically.
func writeParquet[T any](path string, info RunInfo, rows []T, part string, opts ...parquet.WriterOption) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		w, err := newWriter[T](f, info, part, opts...)
		if err != nil {
			return err
		}
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}

// validRows returns rows with every string valid UTF-8 (invalid bytes replaced by
// U+FFFD): a Parquet STRING column must hold UTF-8, and readers such as DuckDB
// refuse the whole file otherwise. Servers' error texts are not always UTF-8.
func validRows(rows []Row) []Row {
	out := rows
	copied := false
	for i := range rows {
		r := &rows[i]
		if validRow(r) {
			continue
		}
		if !copied {
			out = slices.Clone(rows)
			copied = true
		}
		c := &out[i]
		c.RunID = toValid(c.RunID)
		c.TokensSource = toValid(c.TokensSource)
		if c.FinishReason != nil {
			c.FinishReason = ptrTo(toValid(*c.FinishReason))
		}
		if c.Error != nil {
			c.Error = ptrTo(toValid(*c.Error))
		}
	}
	return out
}

func validRow(r *Row) bool {
	return utf8.ValidString(r.RunID) && utf8.ValidString(r.TokensSource) &&
		(r.FinishReason == nil || utf8.ValidString(*r.FinishReason)) &&
		(r.Error == nil || utf8.ValidString(*r.Error))
}

// validSamples is validRows for metric samples (names and labels come from the
// server's /metrics page).
func validSamples(samples []MetricSample) []MetricSample {
	out := samples
	copied := false
	for i := range samples {
		s := &samples[i]
		if utf8.ValidString(s.Name) && utf8.ValidString(s.Labels) {
			continue
		}
		if !copied {
			out = slices.Clone(samples)
			copied = true
		}
		out[i].Name, out[i].Labels = toValid(s.Name), toValid(s.Labels)
	}
	return out
}

func toValid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func ptrTo[T any](v T) *T { return &v }

// ReadInfo reads the run info of the trace at path, of any schema version up to
// SchemaVersion, without reading its rows.
func ReadInfo(path string) (RunInfo, error) {
	var info RunInfo
	f, err := os.Open(path)
	if err != nil {
		return info, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return info, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return info, fmt.Errorf("reading %s: %w", path, err)
	}
	v, ok := pf.Lookup(MetaSchemaVersion)
	if !ok {
		return info, fmt.Errorf("reading %s: not a ceiling trace (no %s in the file metadata)", path, MetaSchemaVersion)
	}
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return info, fmt.Errorf("reading %s: invalid %s %q", path, MetaSchemaVersion, v)
	} else if want, _ := strconv.Atoi(SchemaVersion); n > want {
		return info, fmt.Errorf("reading %s: trace schema version %d is newer than this ceiling reads (%d); upgrade ceiling", path, n, want)
	}
	rj, _ := pf.Lookup(MetaRun)
	if err := json.Unmarshal([]byte(rj), &info); err != nil {
		return info, fmt.Errorf("reading %s: bad %s metadata: %w", path, MetaRun, err)
	}
	return info, nil
}

// WriteMetricsFile writes samples as the metrics sidecar of a run, atomically.
func WriteMetricsFile(path string, info RunInfo, samples []MetricSample) error {
	return writeParquet(path, info, validSamples(samples), "")
}

// ReadMetricsFile reads a whole metrics sidecar: its run info and samples.
func ReadMetricsFile(path string) (RunInfo, []MetricSample, error) {
	info, _, _, err := readMeta(path)
	if err != nil {
		return info, nil, err
	}
	samples, err := readAll[MetricSample](path)
	return info, samples, err
}
