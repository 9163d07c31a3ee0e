package analyze

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// Tests of what analyze refuses or warns about when a trace, its metadata and its
// sidecar do not belong together (issue 8: items 1, 2, 3 and 14).

func containsSubstring(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Item 1: the run metadata lists a level whose rows are missing (a part that failed
// to be written), holds rows of a level it does not list (the level in flight when
// the recorder was killed), or says a level had more measured requests than the
// trace holds. Each is warned about, naming the level.
func TestWarnsWhenLevelMetadataAndRowsDisagree(t *testing.T) {
	info := knownInfo()
	info.Levels = []trace.LevelInfo{
		{Level: 0, Concurrency: 2, Requests: 6}, // the trace holds 4 measured rows
		{Level: 2, Concurrency: 4, Requests: 8}, // listed, no rows at all
	}
	// knownRows holds levels 0 and 1; level 1 is not listed.
	path := writeTrace(t, t.TempDir(), "run.parquet", info, knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	ws := a.Runs[0].Warnings
	for _, want := range []string{
		"level 2 (concurrency 4) is listed in the run metadata as recorded (8 requests), but the trace holds no rows of it",
		"level 1 (concurrency 1): the trace holds 3 measured rows of it, but the run metadata does not list it as recorded",
		"level 0 (concurrency 2): the run metadata says 6 measured requests, the trace holds 4",
	} {
		if !containsSubstring(ws, want) {
			t.Errorf("warnings lack %q:\n%s", want, strings.Join(ws, "\n"))
		}
	}

	// Metadata and rows that agree give none of these warnings.
	path = writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	a, err = Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range a.Runs[0].Warnings {
		if strings.Contains(w, "run metadata") {
			t.Errorf("consistent trace warned: %q", w)
		}
	}
}

// sidecarSamples are server metrics at seconds from t0 (the known run's start).
func sidecarSamples(secs ...float64) []trace.MetricSample {
	var out []trace.MetricSample
	for i, s := range secs {
		out = append(out, trace.MetricSample{TsNs: t0 + int64(s*1e9), Name: "vllm:num_requests_running", Value: float64(i)})
	}
	return out
}

// Item 2: a sidecar belongs to its run. One left at the same path by an earlier run
// (another run id, or no id and samples from before the run started) is never
// attached; the warning says which sidecar was ignored and why.
func TestSidecarOfAnotherRunIgnored(t *testing.T) {
	runMeta := func(id string) string { return `{"tool":"ceiling","run_id":"` + id + `"}` }
	tests := []struct {
		name    string
		meta    map[string]string
		secs    []float64
		attach  bool
		warning string
	}{
		{"run id key matches", map[string]string{trace.MetaRunID: "run-a"}, []float64{0, 1}, true, ""},
		{"run info matches", map[string]string{trace.MetaRun: runMeta("run-a")}, []float64{0, 1}, true, ""},
		{"legacy, no id, inside the run", nil, []float64{0, 1}, true, ""},
		{"run id key differs", map[string]string{trace.MetaRunID: "run-old"}, []float64{0, 1},
			false, `belongs to run "run-old", not to run "run-a"`},
		{"run info differs", map[string]string{trace.MetaRun: runMeta("run-old")}, []float64{0, 1},
			false, `belongs to run "run-old", not to run "run-a"`},
		{"no id, from before the run", nil, []float64{-3600, -3599},
			false, "names no run and its samples are not all inside the run"},
		{"same id, all outside the run", map[string]string{trace.MetaRunID: "run-a"}, []float64{-3600, -3599},
			false, "none of its 2 samples lies inside the run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeTrace(t, dir, "run.parquet", knownInfo(), knownRows())
			side := filepath.Join(dir, "run.metrics.parquet")
			writeParquet(t, side, sidecarSamples(tt.secs...), tt.meta)
			a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Runs[0]
			if got := len(r.Metrics) > 0; got != tt.attach {
				t.Fatalf("attached = %v, want %v; warnings %q", got, tt.attach, r.Warnings)
			}
			if tt.warning == "" {
				if containsSubstring(r.Warnings, "metrics") {
					t.Errorf("unexpected warning: %q", r.Warnings)
				}
				return
			}
			if !containsSubstring(r.Warnings, tt.warning) || !containsSubstring(r.Warnings, side) {
				t.Errorf("warnings %q lack %q naming %s", r.Warnings, tt.warning, side)
			}
		})
	}
}

// Item 2: a sidecar of the right run with a few samples outside the run's time keeps
// the rest, and says how many were left out.
func TestSidecarSamplesOutsideTheRunDropped(t *testing.T) {
	dir := t.TempDir()
	path := writeTrace(t, dir, "run.parquet", knownInfo(), knownRows())
	writeParquet(t, filepath.Join(dir, "run.metrics.parquet"), sidecarSamples(-3600, 0, 1), map[string]string{trace.MetaRunID: "run-a"})
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	if len(r.Metrics) != 1 || len(r.Metrics[0].Points) != 2 {
		t.Fatalf("metrics = %+v, want the 2 samples inside the run", r.Metrics)
	}
	if !containsSubstring(r.Warnings, "1 of its 3 samples lie outside the run") {
		t.Errorf("warnings %q do not count the dropped sample", r.Warnings)
	}
}

// Item 3: the parts directory a kill -9 leaves holds metrics parts beside the row
// parts when the server has /metrics. analyze reads them as the run's metrics instead
// of failing on them with "column run_id is missing"; a stale sidecar of an earlier
// run beside the directory is not read.
func TestPartsDirectoryWithMetricsParts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.parquet")
	parts, err := trace.CreateParts(trace.PartsDir(out))
	if err != nil {
		t.Fatal(err)
	}
	rows := knownRows()
	info := knownInfo()
	info0 := info
	info0.Levels = info.Levels[:1]
	if err := parts.SealRows(0, rows[:5], info0); err != nil {
		t.Fatal(err)
	}
	if err := parts.SealMetrics(0, sidecarSamples(0, 0.5), info0); err != nil {
		t.Fatal(err)
	}
	if err := parts.SealRows(1, rows[5:], info); err != nil {
		t.Fatal(err)
	}
	if err := parts.SealMetrics(1, sidecarSamples(1, 1.5), info); err != nil {
		t.Fatal(err)
	}
	// An earlier run's sidecar at the same path.
	writeParquet(t, trace.MetricsPath(out), sidecarSamples(-7200, -7199), map[string]string{trace.MetaRunID: "run-old"})

	a, err := Analyze(context.Background(), []string{parts.Dir()}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatalf("analyze on a parts directory with metrics parts: %v", err)
	}
	r := a.Runs[0]
	if len(r.Levels) != 2 || r.Levels[0].Requests != 4 || r.Levels[1].Requests != 3 {
		t.Fatalf("levels = %+v, want 4 and 3 requests", r.Levels)
	}
	if len(r.Metrics) != 1 || len(r.Metrics[0].Points) != 4 {
		t.Fatalf("metrics = %+v, want one series of the 4 samples in the metrics parts", r.Metrics)
	}
	if got := r.Metrics[0].Points[0][0]; got != 0 {
		t.Errorf("first metric point at %g s, want 0 (the stale sidecar was read)", got)
	}
}

// Item 14: a FIFO (or any file that is neither regular nor a directory) named as a
// trace is refused at once, naming the path, instead of blocking forever on open;
// a FIFO where the sidecar would be is ignored with a warning.
func TestRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "run.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Analyze(context.Background(), []string{fifo}, Options{TimelineLevel: -1})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("error %v should name %s and say it is not a regular file", err, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("analyze on a FIFO blocked")
	}

	// A FIFO as the sidecar of a real trace.
	dir = t.TempDir()
	path := writeTrace(t, dir, "run.parquet", knownInfo(), knownRows())
	side := filepath.Join(dir, "run.metrics.parquet")
	if err := syscall.Mkfifo(side, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
		if err == nil && !containsSubstring(a.Runs[0].Warnings, side+" is not a regular file") {
			t.Errorf("no warning about the FIFO sidecar: %q", a.Runs[0].Warnings)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a FIFO sidecar failed the analysis: %v", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test can end.
		if f, err := os.OpenFile(side, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("analyze blocked on a FIFO sidecar")
	}
}
