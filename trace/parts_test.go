package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestPartsMergeAndResume(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "run.parquet")
	p, err := CreateParts(PartsDir(trace))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateParts(PartsDir(trace)); err == nil {
		t.Fatal("a second CreateParts on the same directory succeeded")
	}
	info := RunInfo{RunID: "r1", Levels: []LevelInfo{}}
	// Level 0 complete: its rows (out of order), metrics, then info listing it.
	if err := p.SealRows(0, []Row{{RunID: "r1", RequestID: 1}, {RunID: "r1", RequestID: 0}}, info); err != nil {
		t.Fatal(err)
	}
	info.Levels = append(info.Levels, LevelInfo{Level: 0})
	if err := p.SealRows(0, []Row{{RunID: "r1", RequestID: 2}}, info); err != nil {
		t.Fatal(err)
	}
	if err := p.SealMetrics(0, []MetricSample{{TsNs: 5, Name: "m", Value: 1}}, info); err != nil {
		t.Fatal(err)
	}
	// Level 1 unfinished: a part whose info does not list it, and a temporary file.
	if err := p.SealRows(1, []Row{{RunID: "r1", Level: 1, RequestID: 3}}, info); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(p.Dir(), "000009-rows-L0001.parquet.inprogress")
	if err := os.WriteFile(junk, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}

	q, st, err := ResumeParts(p.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if st.NextLevel != 1 || st.NextID != 3 || st.Info.RunID != "r1" {
		t.Errorf("resume state %+v, want level 1, id 3, run r1", st)
	}
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Errorf("temporary file survived the resume: %v", err)
	}
	info.Levels = append(info.Levels, LevelInfo{Level: 1})
	if err := q.SealRows(1, []Row{{RunID: "r1", Level: 1, RequestID: 3}, {RunID: "r1", Level: 1, RequestID: 4}}, info); err != nil {
		t.Fatal(err)
	}

	if err := q.MergeFiles(trace, info); err != nil {
		t.Fatal(err)
	}
	got, rows, err := ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.RequestID)
	}
	if want := []int64{0, 1, 2, 3, 4}; !slices.Equal(ids, want) {
		t.Errorf("merged request ids %v, want %v (the dropped part's row once, in seal order)", ids, want)
	}
	if len(got.Levels) != 2 {
		t.Errorf("merged run info lists %d levels, want 2", len(got.Levels))
	}
	samples, err := readAll[MetricSample](MetricsPath(trace))
	if err != nil || len(samples) != 1 || samples[0].Name != "m" {
		t.Errorf("sidecar %+v, %v; want the one sample", samples, err)
	}

	var buf bytes.Buffer
	if err := q.MergeTo(&buf, info); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 5 {
		t.Errorf("streamed trace has %d rows, want 5", f.NumRows())
	}
	if v, _ := f.Lookup(MetaSchemaVersion); v != SchemaVersion {
		t.Errorf("schema version %q, want %q", v, SchemaVersion)
	}
	if err := q.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir()); !os.IsNotExist(err) {
		t.Errorf("parts directory left: %v", err)
	}
}

func TestResumePartsRefusesEmpty(t *testing.T) {
	if _, _, err := ResumeParts(t.TempDir()); err == nil {
		t.Error("resuming an empty directory succeeded")
	}
}

func TestMetricsPath(t *testing.T) {
	for _, tc := range [][2]string{
		{"run.parquet", "run.metrics.parquet"},
		{"dir/x.y.parquet", "dir/x.y.metrics.parquet"},
		{"run", "run.metrics.parquet"},
	} {
		if got := MetricsPath(tc[0]); got != tc[1] {
			t.Errorf("MetricsPath(%q) = %q, want %q", tc[0], got, tc[1])
		}
	}
}
