package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/internal/atomicfile"
	"github.com/parquet-go/parquet-go"
)

// Parts are the files a recording seals while it runs, in the directory
// PartsDir(trace): each a complete Parquet file of rows (or metric samples) carrying
// the run info as it was when sealed, so a kill loses at most the part being
// written, and the newest part's run info lists the levels completed. Parts are
// written atomically (internal/atomicfile): a part exists whole or not at all.
type Parts struct {
	dir string
	seq int
}

// partMeta is the JSON under MetaPart.
type partMeta struct {
	Kind  string `json:"kind"` // partRows or partMetrics
	Level int    `json:"level"`
	Seq   int    `json:"seq"`
}

const (
	partRows    = "rows"
	partMetrics = "metrics"
)

// ErrInterruptedRun is wrapped by CreateParts' error for a directory holding an
// interrupted run, which ResumeParts could continue; ErrNothingToResume by the
// error for one that holds no sealed level (RemoveParts clears either).
var (
	ErrInterruptedRun  = errors.New("an earlier run was interrupted there and can be resumed, or removed to start again")
	ErrNothingToResume = errors.New("there is nothing to resume; remove it to start again")
)

// CreateParts makes a new, empty parts directory; it refuses an existing one, which
// holds an interrupted run that ResumeParts could continue (RemoveParts discards it).
func CreateParts(dir string) (*Parts, error) {
	if _, err := os.Stat(dir); err == nil {
		if parts, _ := listParts(dir); len(parts) == 0 {
			return nil, fmt.Errorf("%s exists and holds no sealed level: an earlier run was stopped during its first level, so %w", dir, ErrNothingToResume)
		}
		return nil, fmt.Errorf("%s exists: %w", dir, ErrInterruptedRun)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot write the output: %w", err)
	}
	// Prove that a part can be written before the sweep starts.
	probe := filepath.Join(dir, "probe"+atomicfile.TempSuffix)
	f, err := os.Create(probe)
	if err == nil {
		_, err = f.WriteString("ok")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Remove(probe)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot write the output: %w", err)
	}
	return &Parts{dir: dir}, atomicfile.SyncDir(filepath.Dir(dir))
}

// RemoveParts deletes the parts directory dir of an earlier run (--force). It
// refuses a directory that holds anything but part files, so that a mistyped -o
// never deletes something else.
func RemoveParts(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !(strings.HasSuffix(n, ".parquet") || strings.HasSuffix(n, atomicfile.TempSuffix)) {
			return fmt.Errorf("replacing %s: it holds %s, which is not a part: remove it yourself if it is yours to delete", dir, n)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("replacing %s: %w", dir, err)
	}
	return nil
}

// Dir is the parts directory.
func (p *Parts) Dir() string { return p.dir }

// Remove deletes the parts directory (after a merge).
func (p *Parts) Remove() error {
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("removing parts: %w", err)
	}
	return nil
}

func (p *Parts) name(kind string, level int) string {
	p.seq++
	return fmt.Sprintf("%06d-%s-L%04d.parquet", p.seq, kind, level)
}

// SealRows writes rows of one level as a part carrying the run info so far. Rows
// are sorted by request id (a part is filled in completion order).
func (p *Parts) SealRows(level int, rows []Row, info RunInfo) error {
	sorted := slices.Clone(validRows(rows))
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].RequestID < sorted[b].RequestID })
	name := p.name(partRows, level)
	return sealPart(filepath.Join(p.dir, name), info, partMeta{partRows, level, p.seq}, sorted)
}

// SealMetrics writes scraped samples as a part.
func (p *Parts) SealMetrics(level int, samples []MetricSample, info RunInfo) error {
	name := p.name(partMetrics, level)
	return sealPart(filepath.Join(p.dir, name), info, partMeta{partMetrics, level, p.seq}, validSamples(samples))
}

func sealPart[T any](path string, info RunInfo, pm partMeta, rows []T) error {
	partJSON, err := json.Marshal(pm)
	if err != nil {
		return fmt.Errorf("encoding part metadata: %w", err)
	}
	return writeParquet(path, info, rows, string(partJSON))
}

// sealedPart is a part file found on disk.
type sealedPart struct {
	path string
	meta partMeta
	info RunInfo
	rows int64
}

// listParts reads the sealed parts of dir in sequence order (unfinished temporary
// files are ignored: they are what a kill left half-written).
func listParts(dir string) ([]sealedPart, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading parts: %w", err)
	}
	var parts []sealedPart
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".parquet") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		sp, err := readPartMeta(path)
		if err != nil {
			return nil, err
		}
		parts = append(parts, sp)
	}
	sort.Slice(parts, func(a, b int) bool { return parts[a].meta.Seq < parts[b].meta.Seq })
	return parts, nil
}

func readPartMeta(path string) (sealedPart, error) {
	sp := sealedPart{path: path}
	info, pj, rows, err := readMeta(path)
	if err != nil {
		return sp, err
	}
	sp.info, sp.rows = info, rows
	if err := json.Unmarshal([]byte(pj), &sp.meta); err != nil {
		// Fall back on the name for parts written without the key.
		sp.meta.Seq, _ = strconv.Atoi(strings.SplitN(filepath.Base(path), "-", 2)[0])
	}
	return sp, nil
}

// readMeta checks the schema version of the trace or part at path and returns its
// run info, its MetaPart value ("" for a merged trace) and its number of rows.
func readMeta(path string) (RunInfo, string, int64, error) {
	var info RunInfo
	f, err := os.Open(path)
	if err != nil {
		return info, "", 0, fmt.Errorf("opening part: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return info, "", 0, fmt.Errorf("opening part: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return info, "", 0, fmt.Errorf("reading part %s: %w", path, err)
	}
	if v, _ := pf.Lookup(MetaSchemaVersion); v != SchemaVersion {
		return info, "", 0, fmt.Errorf("part %s: schema version %q, want %q", path, v, SchemaVersion)
	}
	rj, _ := pf.Lookup(MetaRun)
	pj, _ := pf.Lookup(MetaPart)
	fd, err := fileDigestOf(path, pf)
	if err == nil {
		id, _ := pf.Lookup(MetaRunID)
		err = fd.verifyMeta(path, rj, pj, id)
	}
	if err != nil {
		return info, "", 0, err
	}
	if err := json.Unmarshal([]byte(rj), &info); err != nil {
		return info, "", 0, fmt.Errorf("part %s: bad run info: %w", path, err)
	}
	return info, pj, pf.NumRows(), nil
}

// fileDigestOf is the checksum of a file opened with parquet-go (nil if none).
func fileDigestOf(path string, pf *parquet.File) (*fileDigest, error) {
	v, ok := pf.Lookup(MetaDigest)
	if !ok {
		return nil, nil
	}
	return parseDigest(path, &v)
}

// readAll reads every row of a Parquet file, verified against its checksum
// (parquet-go checks the pages' CRCs as well).
func readAll[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w: %v", path, ErrCorrupt, err)
	}
	fd, err := fileDigestOf(path, pf)
	if err != nil {
		return nil, err
	}
	rows, err := readRows[T](path, f)
	if err != nil {
		return nil, err
	}
	return rows, verifyRows(path, fd, rows)
}

func readRows[T any](path string, f *os.File) ([]T, error) {
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	out := make([]T, 0, r.NumRows())
	buf := make([]T, 1024)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
}

// split separates the row parts from the metric parts.
func split(parts []sealedPart) (rows, metrics []sealedPart) {
	for _, p := range parts {
		if p.meta.Kind == partMetrics {
			metrics = append(metrics, p)
		} else {
			rows = append(rows, p)
		}
	}
	return rows, metrics
}

// MergeTo writes the row parts as one trace to w, with info as the run metadata
// (the metric parts are left out: a stream has no sidecar).
func (p *Parts) MergeTo(w io.Writer, info RunInfo) error {
	parts, err := listParts(p.dir)
	if err != nil {
		return err
	}
	rows, _ := split(parts)
	return mergeParts[Row](w, rows, info)
}

// MergeFiles writes the row parts as the trace at path and the metric parts, if
// any, as its sidecar MetricsPath(path), each atomically.
func (p *Parts) MergeFiles(path string, info RunInfo) error {
	parts, err := listParts(p.dir)
	if err != nil {
		return err
	}
	rows, metrics := split(parts)
	if err := mergeToFile[Row](path, rows, info); err != nil {
		return err
	}
	if len(metrics) > 0 {
		return mergeToFile[MetricSample](MetricsPath(path), metrics, info)
	}
	// A sidecar left by an earlier run to the same path is not this run's.
	if err := os.Remove(MetricsPath(path)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the earlier run's metrics sidecar: %w", err)
	}
	return nil
}

// mergeParts writes the rows of the given parts as one file to w, with info as
// the run metadata. Parts are read one at a time, so memory stays bounded by the
// largest part.
func mergeParts[T any](w io.Writer, parts []sealedPart, info RunInfo) error {
	pw, err := newWriter[T](w, info, "")
	if err != nil {
		return err
	}
	for _, p := range parts {
		rows, err := readAll[T](p.path)
		if err != nil {
			return err
		}
		if _, err := pw.Write(rows); err != nil {
			return fmt.Errorf("merging %s: %w", p.path, err)
		}
		if err := pw.Flush(); err != nil {
			return fmt.Errorf("merging %s: %w", p.path, err)
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("finishing merged trace: %w", err)
	}
	return nil
}

// mergeToFile merges parts into path atomically.
func mergeToFile[T any](path string, parts []sealedPart, info RunInfo) error {
	return atomicfile.Write(path, func(w io.Writer) error { return mergeParts[T](w, parts, info) })
}

// Resumed is what ResumeParts recovers from a parts directory.
type Resumed struct {
	Info      RunInfo // run info as of the last completed level
	NextLevel int     // the first level not completed
	NextID    int64   // the first request id not used by a completed level
}

// ResumeParts reopens the parts directory of an interrupted recording, drops the
// parts of its unfinished level (they are recorded again) and the temporary files
// the kill left, and says where to continue. A level the run info lists as done
// but whose rows are not all sealed is unfinished too: it and the levels after it
// are recorded again.
func ResumeParts(dir string) (*Parts, Resumed, error) {
	var st Resumed
	parts, err := listParts(dir)
	if err != nil {
		return nil, st, err
	}
	if len(parts) == 0 {
		return nil, st, fmt.Errorf("%s holds no sealed level: the recording was stopped during its first level, so %w", dir, ErrNothingToResume)
	}
	// The newest part's info lists the levels completed when it was sealed.
	st.Info = parts[len(parts)-1].info
	rowsOf := map[int]int{}
	for _, p := range parts {
		if p.meta.Kind == partRows {
			rowsOf[p.meta.Level] += int(p.rows)
		}
	}
	var kept []LevelInfo
	for _, l := range st.Info.Levels {
		if rowsOf[l.Level] == 0 || (l.Rows > 0 && rowsOf[l.Level] != l.Rows) {
			break // rows missing: this level and every later one are recorded again
		}
		kept = append(kept, l)
	}
	st.Info.Levels = kept
	if st.Info.Levels == nil {
		st.Info.Levels = []LevelInfo{}
	}
	done := map[int]bool{}
	for _, l := range st.Info.Levels {
		done[l.Level] = true
		st.NextLevel = max(st.NextLevel, l.Level+1)
	}
	seq := 0
	for _, p := range parts {
		seq = max(seq, p.meta.Seq)
		if !done[p.meta.Level] && p.meta.Kind == partRows {
			if err := os.Remove(p.path); err != nil {
				return nil, st, fmt.Errorf("dropping the unfinished level's part: %w", err)
			}
			continue
		}
		if p.meta.Kind == partRows {
			rows, err := readAll[Row](p.path)
			if err != nil {
				return nil, st, err
			}
			for _, r := range rows {
				st.NextID = max(st.NextID, r.RequestID+1)
			}
		}
	}
	// Left-over temporary files are from the kill.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*"+atomicfile.TempSuffix)); len(tmps) > 0 {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	return &Parts{dir: dir, seq: seq}, st, nil
}
