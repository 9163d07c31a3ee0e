package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

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
	return writeParquet(path, info, rows)
}

// ReadFile reads a whole trace (or one part) written by this package: its run info
// and rows. It is for small files and tests; analyze streams traces instead.
func ReadFile(path string) (RunInfo, []Row, error) {
	info, _, err := readMeta(path)
	if err != nil {
		return info, nil, err
	}
	rows, err := readAll[Row](path)
	return info, rows, err
}

// newWriter starts a Parquet file of T rows carrying the schema version and info.
func newWriter[T any](w io.Writer, info RunInfo, opts ...parquet.WriterOption) (*parquet.GenericWriter[T], error) {
	runJSON, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encoding run info: %w", err)
	}
	opts = append([]parquet.WriterOption{
		parquet.KeyValueMetadata(MetaSchemaVersion, SchemaVersion),
		parquet.KeyValueMetadata(MetaRun, string(runJSON)),
		parquet.Compression(&parquet.Zstd),
	}, opts...)
	return parquet.NewGenericWriter[T](w, opts...), nil
}

// writeParquet writes rows as one file at path, atomically.
func writeParquet[T any](path string, info RunInfo, rows []T, opts ...parquet.WriterOption) error {
	return atomicfile.Write(path, func(f io.Writer) error {
		w, err := newWriter[T](f, info, opts...)
		if err != nil {
			return err
		}
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}
