package record

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

	"github.com/parquet-go/parquet-go"
)

// MetaPart is the key-value metadata key of a part file: which kind of part and
// which level it belongs to.
const MetaPart = "ceiling.part"

// partMeta is the JSON under MetaPart.
type partMeta struct {
	Kind  string `json:"kind"` // "rows" or "metrics"
	Level int    `json:"level"`
	Seq   int    `json:"seq"`
}

// PartsDir is where the parts of the trace at path are sealed while recording.
func PartsDir(path string) string { return path + ".parts" }

// MetricsPath is the sidecar of the trace at path.
func MetricsPath(path string) string {
	return strings.TrimSuffix(path, ".parquet") + ".metrics.parquet"
}

// partStore seals rows and metric samples into part files under one directory:
// written as NAME.inprogress, closed, fsynced, renamed, and the directory fsynced,
// so that a part either exists whole or not at all, whatever kills the recorder.
type partStore struct {
	dir string
	seq int
}

// createParts makes a new, empty parts directory; it refuses an existing one, which
// holds an interrupted run that --resume could continue.
func createParts(dir string) (*partStore, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s exists: an earlier run was interrupted there; continue it with --resume or remove the directory", dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot write the output: %w", err)
	}
	// Prove that a part can be written before the sweep starts.
	probe := filepath.Join(dir, "probe.inprogress")
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
	return &partStore{dir: dir}, syncDir(filepath.Dir(dir))
}

func (p *partStore) name(kind string, level int) string {
	p.seq++
	return fmt.Sprintf("%06d-%s-L%04d.parquet", p.seq, kind, level)
}

// sealRows writes rows of one level as a part carrying the run info so far.
func (p *partStore) sealRows(level int, rows []Row, info RunInfo) error {
	sorted := slices.Clone(rows)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].RequestID < sorted[b].RequestID })
	name := p.name("rows", level)
	return sealPart(filepath.Join(p.dir, name), info, partMeta{"rows", level, p.seq}, sorted)
}

// sealMetrics writes scraped samples as a part.
func (p *partStore) sealMetrics(level int, samples []MetricSample, info RunInfo) error {
	name := p.name("metrics", level)
	return sealPart(filepath.Join(p.dir, name), info, partMeta{"metrics", level, p.seq}, samples)
}

func sealPart[T any](path string, info RunInfo, pm partMeta, rows []T) error {
	runJSON, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encoding run info: %w", err)
	}
	partJSON, _ := json.Marshal(pm)
	return writeSealed(path, func(f *os.File) error {
		w := parquet.NewGenericWriter[T](f,
			parquet.KeyValueMetadata(MetaSchemaVersion, SchemaVersion),
			parquet.KeyValueMetadata(MetaRun, string(runJSON)),
			parquet.KeyValueMetadata(MetaPart, string(partJSON)),
			parquet.Compression(&parquet.Zstd),
		)
		if _, err := w.Write(rows); err != nil {
			return err
		}
		return w.Close()
	})
}

// writeSealed writes path through path.inprogress: write, fsync, close, rename, fsync
// the directory. A reader (or a recorder killed halfway) therefore never finds a
// half-written file under the final name.
func writeSealed(path string, write func(f *os.File) error) error {
	tmp := path + ".inprogress"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("sealing %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// sealedPart is a part file found on disk.
type sealedPart struct {
	path string
	meta partMeta
	info RunInfo
}

// listParts reads the sealed parts of dir in sequence order (unfinished
// .inprogress files are ignored: they are what a kill left half-written).
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
	f, err := os.Open(path)
	if err != nil {
		return sp, fmt.Errorf("opening part: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sp, fmt.Errorf("opening part: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return sp, fmt.Errorf("reading part %s: %w", path, err)
	}
	if v, _ := pf.Lookup(MetaSchemaVersion); v != SchemaVersion {
		return sp, fmt.Errorf("part %s: schema version %q, want %q", path, v, SchemaVersion)
	}
	pj, _ := pf.Lookup(MetaPart)
	if err := json.Unmarshal([]byte(pj), &sp.meta); err != nil {
		// Fall back on the name for parts written without the key.
		sp.meta.Seq, _ = strconv.Atoi(strings.SplitN(filepath.Base(path), "-", 2)[0])
	}
	rj, _ := pf.Lookup(MetaRun)
	if err := json.Unmarshal([]byte(rj), &sp.info); err != nil {
		return sp, fmt.Errorf("part %s: bad run info: %w", path, err)
	}
	return sp, nil
}

// readAll reads every row of a part file.
func readAll[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
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

// mergeParts writes the rows of the given parts as one trace to w, with info as
// the run metadata. Parts are read one at a time, so memory stays bounded by the
// largest part.
func mergeParts[T any](w io.Writer, parts []sealedPart, info RunInfo) error {
	runJSON, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("encoding run info: %w", err)
	}
	pw := parquet.NewGenericWriter[T](w,
		parquet.KeyValueMetadata(MetaSchemaVersion, SchemaVersion),
		parquet.KeyValueMetadata(MetaRun, string(runJSON)),
		parquet.Compression(&parquet.Zstd),
	)
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

// mergeToFile merges parts into path atomically (temporary file, fsync, rename).
func mergeToFile[T any](path string, parts []sealedPart, info RunInfo) error {
	return writeSealed(path, func(f *os.File) error { return mergeParts[T](f, parts, info) })
}

// resumeState is what --resume recovers from a parts directory.
type resumeState struct {
	info      RunInfo // run info as of the last completed level
	nextLevel int
	nextID    int64
	seq       int
}

// loadResume reads a parts directory, drops the parts of an unfinished level (they
// are recorded again), and says where to continue.
func loadResume(dir string) (*partStore, resumeState, error) {
	var st resumeState
	parts, err := listParts(dir)
	if err != nil {
		return nil, st, err
	}
	if len(parts) == 0 {
		return nil, st, fmt.Errorf("%s holds no sealed part to resume from", dir)
	}
	// The newest part's info lists the levels completed when it was sealed.
	st.info = parts[len(parts)-1].info
	done := map[int]bool{}
	for _, l := range st.info.Levels {
		done[l.Level] = true
		st.nextLevel = max(st.nextLevel, l.Level+1)
	}
	for _, p := range parts {
		st.seq = max(st.seq, p.meta.Seq)
		if !done[p.meta.Level] && p.meta.Kind == "rows" {
			if err := os.Remove(p.path); err != nil {
				return nil, st, fmt.Errorf("dropping the unfinished level's part: %w", err)
			}
			continue
		}
		if p.meta.Kind == "rows" {
			rows, err := readAll[Row](p.path)
			if err != nil {
				return nil, st, err
			}
			for _, r := range rows {
				st.nextID = max(st.nextID, r.RequestID+1)
			}
		}
	}
	// Left-over temporary files are from the kill.
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.inprogress")); len(tmps) > 0 {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	return &partStore{dir: dir, seq: st.seq}, st, nil
}
