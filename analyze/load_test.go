package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
	"github.com/parquet-go/parquet-go"
)

// writeParquet writes rows of any struct type with the given key-value metadata.
func writeParquet[T any](t *testing.T, path string, rows []T, meta map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var opts []parquet.WriterOption
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeTrace(t, dir, "good.parquet", knownInfo(), knownRows())
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	notTrace := filepath.Join(dir, "plain.parquet")
	writeParquet(t, notTrace, knownRows(), nil)
	newer := filepath.Join(dir, "newer.parquet")
	writeParquet(t, newer, knownRows(), map[string]string{trace.MetaSchemaVersion: "3"})
	truncated := filepath.Join(dir, "truncated.parquet")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	type noGaps struct {
		RunID string `parquet:"run_id"`
		Level int32  `parquet:"level"`
	}
	missing := filepath.Join(dir, "missing.parquet")
	writeParquet(t, missing, []noGaps{{"r", 0}}, map[string]string{trace.MetaSchemaVersion: "1"})
	type wideLevel struct {
		RunID string `parquet:"run_id"`
		Level int64  `parquet:"level"`
	}
	wrongType := filepath.Join(dir, "wrongtype.parquet")
	writeParquet(t, wrongType, []wideLevel{{"r", 0}}, map[string]string{trace.MetaSchemaVersion: "1"})
	notParquet := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notParquet, []byte("hello, not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyParts := filepath.Join(dir, "empty.parts")
	if err := os.Mkdir(emptyParts, 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path, want string
	}{
		{"not a ceiling trace", notTrace, "not a ceiling trace"},
		{"newer schema", newer, "schema version 3 is newer"},
		{"truncated", truncated, "not a readable Parquet file"},
		{"missing column", missing, "column concurrency is missing"},
		{"wrong type", wrongType, "column level has type int64, want int32"},
		{"not parquet", notParquet, "not a readable Parquet file"},
		{"absent", filepath.Join(dir, "absent.parquet"), "no such file"},
		{"empty parts dir", emptyParts, "no sealed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Analyze(context.Background(), []string{tc.path}, Options{TimelineLevel: -1})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q should name %s and say %q", err, tc.path, tc.want)
			}
		})
	}
}

// TestPartsDirectory reads an interrupted run's sealed parts, ignoring the part in
// progress, to the same statistics as the merged file.
func TestPartsDirectory(t *testing.T) {
	dir := t.TempDir()
	whole := writeTrace(t, dir, "run.parquet", knownInfo(), knownRows())
	parts := filepath.Join(dir, "run2.parquet.parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	rows := knownRows()
	info0 := knownInfo()
	info0.Levels = info0.Levels[:1]
	writeTrace(t, parts, "part-000000.parquet", info0, rows[:5])
	writeTrace(t, parts, "part-000001.parquet", knownInfo(), rows[5:])
	if err := os.WriteFile(filepath.Join(parts, "part-000002.parquet.inprogress"), []byte("half a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(context.Background(), []string{whole, parts}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 2 {
		t.Fatalf("got %d runs, want 2", len(a.Runs))
	}
	if a.Runs[1].Source != parts {
		t.Errorf("source = %q, want %q", a.Runs[1].Source, parts)
	}
	w, _ := json.Marshal(a.Runs[0].Levels)
	p, _ := json.Marshal(a.Runs[1].Levels)
	if string(w) != string(p) {
		t.Errorf("parts analyze differently from the whole file:\n%s\n%s", w, p)
	}
	if !containsPrefix(a.Runs[1].Warnings, "level 1 (concurrency 1): client CPU at 93%") {
		t.Errorf("level info of the later part not merged: %q", a.Runs[1].Warnings)
	}
}

// TestConcatenatedRuns: one file holding two runs (told apart by run_id) gives two
// runs; the metadata belongs to the run it names.
func TestConcatenatedRuns(t *testing.T) {
	rows := knownRows()
	for _, r := range knownRows() {
		r.RunID = "run-z"
		rows = append(rows, r)
	}
	path := writeTrace(t, t.TempDir(), "both.parquet", knownInfo(), rows)
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 2 || a.Runs[0].RunID != "run-a" || a.Runs[1].RunID != "run-z" {
		t.Fatalf("runs = %d, want run-a and run-z", len(a.Runs))
	}
	if a.Runs[0].Model != "tiny" || a.Runs[1].Model != "" || string(a.Runs[1].Server) != "null" {
		t.Errorf("metadata attached to the wrong run: %q %q %s", a.Runs[0].Model, a.Runs[1].Model, a.Runs[1].Server)
	}
	if a.Runs[1].Levels[0].Requests != 4 {
		t.Errorf("run-z level 0 requests = %d, want 4", a.Runs[1].Levels[0].Requests)
	}
}

func TestMetricsSidecar(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir, "run.parquet", knownInfo(), knownRows())
	s := func(sec float64, name string, v float64) trace.MetricSample {
		return trace.MetricSample{TsNs: t0 + int64(sec*1e9), Name: name, Labels: `model_name="tiny"`, Value: v}
	}
	samples := []trace.MetricSample{
		s(0, "vllm:num_requests_running", 0), s(1, "vllm:num_requests_running", 2), s(2, "vllm:num_requests_running", 2),
		s(0, "vllm:generation_tokens_total", 100), s(1, "vllm:generation_tokens_total", 150), s(2, "vllm:generation_tokens_total", 250),
		s(0, "process_cpu_seconds_total", 1), s(1, "process_cpu_seconds_total", 2),
	}
	writeParquet(t, filepath.Join(dir, "run.metrics.parquet"), samples, nil)
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := a.Runs[0].Metrics
	if len(m) != 2 {
		t.Fatalf("got %d series, want 2: %+v", len(m), m)
	}
	if m[0].Name != "rate(vllm:generation_tokens_total)" || len(m[0].Points) != 2 || m[0].Points[1] != [2]float64{2, 100} {
		t.Errorf("token counter as rate = %+v, want points (1, 50) (2, 100)", m[0])
	}
	if m[1].Name != "vllm:num_requests_running" || len(m[1].Points) != 3 || m[1].Points[1] != [2]float64{1, 2} {
		t.Errorf("running gauge = %+v", m[1])
	}
}

func TestTimelineThinned(t *testing.T) {
	var rows []trace.Row
	for i := range 1200 {
		rows = append(rows, engineRow(0, 4, int32(i%4), int64(i), float64(i/4)*50, 10, gaps(2, 10000), 3))
	}
	path := writeTrace(t, t.TempDir(), "big.parquet", knownInfo(), rows)
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	tl := a.Runs[0].Timeline
	if tl == nil || !tl.Thinned || tl.Total != 1200 || len(tl.Requests) > timelineMax || len(tl.Requests) < timelineMax/2 {
		t.Fatalf("timeline = total %d thinned %v with %d requests, want ≤ %d of 1200", tl.Total, tl.Thinned, len(tl.Requests), timelineMax)
	}
	for i := 1; i < len(tl.Requests); i++ {
		if tl.Requests[i].Sent < tl.Requests[i-1].Sent {
			t.Fatal("timeline not in send order")
		}
	}
}

func TestAnalyzeCanceled(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Analyze(ctx, []string{path}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
