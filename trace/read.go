package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	pgo "github.com/parquet-go/parquet-go"
)

// Reading: traces are read with Arrow record batches of batchRows rows, one batch
// at a time, so memory is bounded by the batch size (and one column chunk's read
// buffer), never by the file size. A File is one Parquet file of a trace, on disk
// or as an image in memory (an imported run that was never written out).

// maxSchemaVersion is the newest trace schema version this package reads.
const maxSchemaVersion = 2

// batchRows is the number of rows per Arrow record batch. 16k rows of 100 chunk gaps
// are about 6.4 MB of gap values.
const batchRows = 16 << 10

// readBufferBytes is the buffered-stream size for column chunks, so that a large
// column chunk is not read into memory whole.
const readBufferBytes = 1 << 20

// File is one Parquet file of a trace (a whole trace, a part, or a metrics file):
// the path of a file on disk, or an image in memory with the name errors give it.
type File struct {
	Name  string
	image []byte // nil: read Name from disk
}

// Column is one column a reader asks for and the Arrow type it must have.
type Column struct {
	Name string
	Type arrow.Type
	List bool // a list whose elements have Type
}

// BatchFunc receives one record batch; cols maps column name to its index in rec.
// The batch (and every string in it) is valid only during the call.
type BatchFunc func(rec arrow.Record, cols map[string]int) error

// open opens the file for reading with a bounded read buffer, and returns its
// checksum (nil for a file written before checksums), its metadata verified
// against it.
func (f File) open() (*file.Reader, *fileDigest, error) {
	rdr, err := f.decodeFooter()
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w: not a readable Parquet file (truncated, or its footer damaged): %v", f.Name, ErrCorrupt, err)
	}
	kv := rdr.MetaData().KeyValueMetadata()
	fd, err := parseDigest(f.Name, kv.FindValue(MetaDigest))
	if err == nil {
		err = fd.verifyMeta(f.Name, value(kv.FindValue(MetaRun)), value(kv.FindValue(MetaPart)), value(kv.FindValue(MetaRunID)))
	}
	if err != nil {
		rdr.Close()
		return nil, nil, err
	}
	return rdr, fd, nil
}

func value(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// decodeFooter opens the file with Arrow's reader, which decodes the footer (the
// file metadata). The footer is first decoded by parquet-go, which reports a
// malformed one as an error; Arrow's Thrift decoding dereferences nil on some
// footers it still cannot decode (a flipped bit in a field header), so the one
// call that decodes it recovers a panic into an error. Nothing else runs under
// that recover: no state of this package is left half-changed by it.
func (f File) decodeFooter() (rdr *file.Reader, err error) {
	var ra io.ReaderAt
	var size int64
	if f.image != nil {
		ra, size = bytes.NewReader(f.image), int64(len(f.image))
	} else {
		fh, err := os.Open(f.Name)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		st, err := fh.Stat()
		if err != nil {
			return nil, err
		}
		ra, size = fh, st.Size()
	}
	if err := checkFooter(ra, size); err != nil {
		return nil, err
	}
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferBytes
	defer func() {
		if p := recover(); p != nil {
			rdr, err = nil, fmt.Errorf("the file metadata cannot be decoded (%v)", p)
		}
	}()
	if f.image != nil {
		rdr, err = file.NewParquetReader(bytes.NewReader(f.image), file.WithReadProps(props))
	} else {
		rdr, err = file.OpenParquetFile(f.Name, false, file.WithReadProps(props))
	}
	if err == nil {
		if err = checkColumnChunks(rdr); err != nil {
			rdr.Close()
			rdr = nil
		}
	}
	return rdr, err
}

// checkColumnChunks refuses a footer whose column chunks lack their metadata:
// Arrow decodes a column chunk's metadata lazily, in the goroutines that read the
// columns, where a nil one is a panic no recover of ours can catch.
func checkColumnChunks(rdr *file.Reader) error {
	md := rdr.MetaData()
	cols := md.Schema.NumColumns()
	for i, rg := range md.RowGroups {
		if rg == nil || len(rg.Columns) != cols {
			return fmt.Errorf("row group %d has no metadata for each of the %d columns", i, cols)
		}
		for j, cc := range rg.Columns {
			if cc == nil || cc.MetaData == nil || cc.IsSetCryptoMetadata() {
				return fmt.Errorf("row group %d: column %d has no readable metadata", i, j)
			}
		}
	}
	return nil
}

// checkFooter decodes the footer with parquet-go, which returns an error for a
// malformed one (recovering a panic as decodeFooter does, for the same reason).
func checkFooter(ra io.ReaderAt, size int64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the file metadata cannot be decoded (%v)", p)
		}
	}()
	_, err = pgo.OpenFile(ra, size, pgo.SkipPageIndex(true), pgo.SkipBloomFilters(true))
	return err
}

// readMetaKind checks that the file is a ceiling trace (or part) of a schema
// version this package reads and returns its MetaRun JSON (nil when absent) and,
// for a part, its kind (MetaPart).
func (f File) readMetaKind() (raw json.RawMessage, kind string, verified bool, err error) {
	rdr, fd, err := f.open()
	if err != nil {
		return nil, "", false, err
	}
	defer rdr.Close()
	raw, err = checkMeta(f.Name, rdr)
	if err != nil {
		return nil, "", false, err
	}
	var part struct {
		Kind string `json:"kind"`
	}
	if v := rdr.MetaData().KeyValueMetadata().FindValue(MetaPart); v != nil {
		_ = json.Unmarshal([]byte(*v), &part) // a part without a readable kind is read as rows
	}
	return raw, part.Kind, fd != nil, nil
}

// Verified says whether the file carries a checksum (MetaDigest) that its reads
// are checked against; a file without one (another tool's, one written before
// checksums, or one whose checksum was stripped) is read unverified.
func (f File) Verified() (bool, error) {
	rdr, fd, err := f.open()
	if err != nil {
		return false, err
	}
	rdr.Close()
	return fd != nil, nil
}

// UnverifiedWarning is what a reader says of a file read without a checksum.
func UnverifiedWarning(name string) string {
	return fmt.Sprintf("%s carries no checksum (%s): its values are read unverified (another tool wrote it, a ceiling before checksums, or it was altered)", name, MetaDigest)
}

func checkMeta(name string, rdr *file.Reader) (json.RawMessage, error) {
	kv := rdr.MetaData().KeyValueMetadata()
	v := kv.FindValue(MetaSchemaVersion)
	if v == nil {
		return nil, fmt.Errorf("reading %s: not a ceiling trace (no %s in the file metadata)", name, MetaSchemaVersion)
	}
	n, err := strconv.Atoi(strings.TrimSpace(*v))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("reading %s: invalid %s %q", name, MetaSchemaVersion, *v)
	}
	if n > maxSchemaVersion {
		return nil, fmt.Errorf("reading %s: trace schema version %d is newer than this ceiling reads (%d); upgrade ceiling", name, n, maxSchemaVersion)
	}
	if r := kv.FindValue(MetaRun); r != nil && *r != "" {
		if !utf8.ValidString(*r) {
			return nil, fmt.Errorf("reading %s: %w: its %s metadata is not valid UTF-8", name, ErrCorrupt, MetaRun)
		}
		if !json.Valid([]byte(*r)) {
			return nil, fmt.Errorf("reading %s: %s metadata is not valid JSON", name, MetaRun)
		}
		return json.RawMessage(*r), nil
	}
	return nil, nil
}

// Scan streams the given columns of the trace file in record batches.
func (f File) Scan(ctx context.Context, want []Column, fn BatchFunc) (err error) {
	rdr, fd, err := f.open()
	if err != nil {
		return err
	}
	defer rdr.Close()
	if _, err := checkMeta(f.Name, rdr); err != nil {
		return err
	}
	return scanColumns(ctx, f.Name, rdr, fd, want, fn)
}

// scanColumns streams the columns want of rdr in record batches.
// The values read are checked against the file's checksum fd (when it has one) as
// they stream; a mismatch is an error wrapping ErrCorrupt once the scan ends.
func scanColumns(ctx context.Context, name string, rdr *file.Reader, fd *fileDigest, want []Column, fn BatchFunc) (err error) {
	// Arrow panics on some malformed inputs; bad input must give an error naming the
	// file, never a crash.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reading %s: %w: malformed trace: %v", name, ErrCorrupt, p)
		}
	}()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	var leaves []int
	for _, c := range want {
		idx, err := fieldLeaves(name, fr.Manifest, c)
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
		return fmt.Errorf("reading %s: %w", name, err)
	}
	defer rr.Release()
	cols := map[string]int{}
	for i, f := range rr.Schema().Fields() {
		cols[f.Name] = i
	}
	sum := newArrowDigester(fd, want)
	for rr.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := sum.add(rr.Record(), cols); err != nil {
			return fmt.Errorf("reading %s: %w: %v", name, ErrCorrupt, err)
		}
		if err := fn(rr.Record(), cols); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("reading %s: %w: %v (truncated or damaged file?)", name, ErrCorrupt, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return sum.verify(name)
}

// fieldLeaves finds the top-level column c in the file and returns its leaf column
// indices, checking its type.
func fieldLeaves(name string, m *pqarrow.SchemaManifest, c Column) ([]int, error) {
	for _, f := range m.Fields {
		if f.Field.Name != c.Name {
			continue
		}
		t := f.Field.Type
		if c.List {
			lt, ok := t.(*arrow.ListType)
			if !ok || lt.Elem().ID() != c.Type || len(f.Children) != 1 || !f.Children[0].IsLeaf() {
				return nil, fmt.Errorf("reading %s: column %s has type %s, want list<%s>", name, c.Name, t, strings.ToLower(c.Type.String()))
			}
			return []int{f.Children[0].ColIndex}, nil
		}
		if t.ID() != c.Type || !f.IsLeaf() {
			return nil, fmt.Errorf("reading %s: column %s has type %s, want %s", name, c.Name, t, strings.ToLower(c.Type.String()))
		}
		return []int{f.ColIndex}, nil
	}
	return nil, fmt.Errorf("reading %s: not a ceiling trace of schema version 1 or 2: column %s is missing", name, c.Name)
}

// Col returns the column named name of rec as type T. Scan checked the types
// already, so a mismatch is an internal error, reported rather than panicking.
func Col[T arrow.Array](rec arrow.Record, cols map[string]int, name string) (T, error) {
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

// HasColumn reports whether the file has a top-level column name.
func (f File) HasColumn(name string) (bool, error) {
	rdr, _, err := f.open()
	if err != nil {
		return false, err
	}
	defer rdr.Close()
	return rdr.MetaData().Schema.ColumnIndexByName(name) >= 0, nil
}

// sampleColumns are the metrics file's columns (MetricSample).
func sampleColumns() []Column {
	return []Column{
		{Name: SampleTsNs, Type: arrow.INT64, List: false},
		{Name: SampleName, Type: arrow.STRING, List: false},
		{Name: SampleLabels, Type: arrow.STRING, List: false},
		{Name: SampleValue, Type: arrow.FLOAT64, List: false},
	}
}

// SampleFunc receives one metric sample; name and labels are valid only during
// the call (clone them to keep them).
type SampleFunc func(tsNs int64, name, labels string, value float64)

// ScanSamples reads a metrics file (a sidecar or a metrics part) sample by sample
// and returns the run it says it belongs to: MetaRunID, else the run_id of its
// MetaRun metadata, else "".
func (f File) ScanSamples(ctx context.Context, fn SampleFunc) (runID string, err error) {
	rdr, fd, err := f.open()
	if err != nil {
		return "", err
	}
	defer rdr.Close()
	runID = metricsRunID(rdr)
	return runID, scanColumns(ctx, f.Name, rdr, fd, sampleColumns(), func(rec arrow.Record, _ map[string]int) error {
		ts := rec.Column(0).(*array.Int64)
		name := rec.Column(1).(*array.String)
		labels := rec.Column(2).(*array.String)
		val := rec.Column(3).(*array.Float64)
		for i := 0; i < int(rec.NumRows()); i++ {
			fn(ts.Value(i), name.Value(i), labels.Value(i), val.Value(i))
		}
		return nil
	})
}

// metricsRunID is the run a metrics file says it belongs to: MetaRunID, else the
// run_id of the MetaRun metadata the recorder's merge writes into it, else "".
func metricsRunID(rdr *file.Reader) string {
	kv := rdr.MetaData().KeyValueMetadata()
	if v := kv.FindValue(MetaRunID); v != nil && *v != "" {
		return *v
	}
	if v := kv.FindValue(MetaRun); v != nil && *v != "" {
		var info struct {
			RunID string `json:"run_id"`
		}
		if json.Unmarshal([]byte(*v), &info) == nil {
			return info.RunID
		}
	}
	return ""
}
