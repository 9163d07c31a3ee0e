package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source is one trace as a reader sees it: what the user named (a trace file, a
// RUN.parts directory) or a trace image in memory, resolved into the files to read
// and the run metadata found in them.
type Source struct {
	Name     string // as the user gave it
	Files    []File // row files: one, or the sealed row parts in order
	Sidecars []File // metrics files: the metrics parts of RUN.parts, else RUN.metrics.parquet
	Warnings []string
	// Info is the MetaRun of the newest file, its Levels merged from every file's
	// (sorted by level). Its Server is left zero: Server holds the server object
	// raw, as the recorder wrote it (fields this version does not know included).
	Info   RunInfo
	Server json.RawMessage
	// RawInfo is the MetaRun JSON of the newest file, passed through.
	RawInfo json.RawMessage
	// salvage: corrupt parts are left out with a warning (OpenSalvage).
	salvage bool
}

// Salvage says whether the source leaves out corrupt parts (OpenSalvage).
func (s *Source) Salvage() bool { return s.salvage }

// Drop leaves out the file f (found corrupt while reading) with a warning.
func (s *Source) Drop(f File, why error) {
	for i, g := range s.Files {
		if g.Name == f.Name {
			s.Files = append(s.Files[:i:i], s.Files[i+1:]...)
			break
		}
	}
	s.Warnings = append(s.Warnings, fmt.Sprintf("%v: the part is left out (--ignore-corrupt); its levels are missing", why))
}

// partKindMetrics is the kind a part of scraped metric samples has in its MetaPart.
const partKindMetrics = partMetrics

// Open resolves name (a trace file or a RUN.parts directory) into the trace files
// to read and checks that each is a ceiling trace this package reads.
func Open(name string) (*Source, error) { return open(name, false) }

// OpenSalvage is Open, except that the sealed parts of a RUN.parts directory
// that are corrupt (ErrCorrupt: damaged footer or metadata) are left out with a
// warning naming each, so that the intact parts can still be read. A trace file
// is read as Open reads it: it has no intact part to salvage.
func OpenSalvage(name string) (*Source, error) { return open(name, true) }

func open(name string, salvage bool) (*Source, error) {
	st, err := CheckInputPath(name)
	if err != nil {
		return nil, err
	}
	src := &Source{Name: name}
	base := name
	var files []File
	if st.IsDir() {
		// RUN.parts: the trace it becomes is RUN.
		if files, err = sealedFiles(name); err != nil {
			return nil, err
		}
		src.salvage = salvage
		base = strings.TrimSuffix(filepath.Clean(name), PartsDir(""))
	} else {
		files = []File{{Name: name}}
	}
	if err := src.add(files); err != nil {
		return nil, err
	}
	// The metrics sidecar of RUN (or of RUN.parts) is beside it; a parts directory
	// with metrics parts has its own, and a sidecar beside it is an earlier run's.
	if side := MetricsPath(base); len(src.Sidecars) == 0 {
		if st, err := os.Stat(side); err == nil {
			if st.Mode().IsRegular() {
				src.Sidecars = []File{{Name: side}}
			} else {
				src.Warnings = append(src.Warnings, fmt.Sprintf("server metrics not read: %s is not a regular file (%s)", side, FileKind(st.Mode())))
			}
		}
	}
	return src, nil
}

// OpenImage is the trace whose Parquet image is in memory (an imported run that was
// never written out); name is what errors and the analysis call it.
func OpenImage(name string, image []byte) (*Source, error) {
	src := &Source{Name: name}
	if err := src.add([]File{{Name: name, image: image}}); err != nil {
		return nil, err
	}
	return src, nil
}

// add reads the metadata of files: every file must be a readable ceiling trace;
// the metadata of the last (the newest part) describes the run, with the level
// records of all files merged. Metrics parts are the run's metrics, not rows.
func (s *Source) add(files []File) error {
	levels := map[int]LevelInfo{}
	for _, f := range files {
		raw, kind, verified, err := f.readMetaKind()
		if err != nil && s.salvage && errors.Is(err, ErrCorrupt) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%v: the part is left out (--ignore-corrupt); its levels are missing", err))
			continue
		}
		if err != nil {
			return err
		}
		if !verified {
			s.Warnings = append(s.Warnings, UnverifiedWarning(f.Name))
		}
		if kind == partKindMetrics {
			s.Sidecars = append(s.Sidecars, f)
		} else {
			s.Files = append(s.Files, f)
		}
		var m struct {
			RunInfo
			Server json.RawMessage `json:"server"`
		}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("reading %s: decoding %s metadata: %w", f.Name, MetaRun, err)
			}
		}
		for _, l := range m.Levels {
			levels[l.Level] = l
		}
		s.Info, s.Server, s.RawInfo = m.RunInfo, m.Server, raw
	}
	if len(s.Files) == 0 {
		return fmt.Errorf("reading %s: only metrics parts, no sealed rows: no level was completed", s.Name)
	}
	s.Info.Levels = s.Info.Levels[:0]
	for _, l := range levels {
		s.Info.Levels = append(s.Info.Levels, l)
	}
	sort.Slice(s.Info.Levels, func(i, j int) bool { return s.Info.Levels[i].Level < s.Info.Levels[j].Level })
	return nil
}

// sealedFiles returns the sealed part files of an interrupted run's RUN.parts
// directory in name order. Parts still being written (*.inprogress) are skipped.
func sealedFiles(dir string) ([]File, error) {
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
	files := make([]File, len(parts))
	for i, p := range parts {
		files[i] = File{Name: p}
	}
	return files, nil
}

// CheckInputPath refuses what cannot be a trace before anything opens it: opening a
// FIFO blocks until a writer comes, and a device may never end.
func CheckInputPath(name string) (os.FileInfo, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file or a directory (%s): give a trace file or a RUN.parts directory", name, FileKind(st.Mode()))
	}
	return st, nil
}

// FileKind names a non-regular file mode for an error message.
func FileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
