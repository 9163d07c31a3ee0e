package analyze

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/trace"
)

// gpuRun writes a three-level sweep (c=4, 400 requests a level, 20 s apart) and
// returns its path and the span its levels cover, for sidecars to be put beside.
func gpuRun(t *testing.T, dir string) (path string, start, end int64) {
	t.Helper()
	var rows []trace.Row
	for lvl := range int32(3) {
		for i := range 400 {
			rows = append(rows, engineRow(lvl, 4, int32(i%4), int64(lvl)*1000+int64(i), float64(lvl)*20000+float64(i/4)*50, 10, gaps(2, 10000), 3))
		}
	}
	info := knownInfo()
	info.Plan.Concurrency = []int{4, 4, 4}
	info.Levels = []trace.LevelInfo{{Level: 0, Concurrency: 4}, {Level: 1, Concurrency: 4}, {Level: 2, Concurrency: 4}}
	return writeTrace(t, dir, "run.parquet", info, rows), t0, t0 + 45e9
}

const dcgmLabels = `Hostname="node",UUID="GPU-34319582-d595-d1c7-d1d2-179bcfa61660",ceiling_gpu_source="127.0.0.1:9400",gpu="0"`

// Issue 31 item 7: what analyze keeps of a metrics file is bounded by what it
// selects, not by how well Parquet compressed it: the samples kept stop at the
// limit with a warning naming the file, and a name or label text repeated sample
// after sample is held once (each sample held its own two copies: 2.9 GB for an
// 857 KB file).
func TestSidecarLoadBounded(t *testing.T) {
	dir := t.TempDir()
	const n = 60_000
	samples := make([]trace.MetricSample, n)
	for i := range samples {
		samples[i] = trace.MetricSample{TsNs: t0 + int64(i)*1e6, Name: "DCGM_FI_DEV_POWER_USAGE", Labels: dcgmLabels, Value: 300}
	}
	side := filepath.Join(dir, "run.metrics.parquet")
	if err := trace.WriteMetricsFile(side, knownInfo(), samples); err != nil {
		t.Fatal(err)
	}
	f := trace.File{Name: side}
	sp, err := loadMetrics(context.Background(), f, n/3)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.gpu) != n/3 {
		t.Errorf("%d samples kept, want the limit %d", len(sp.gpu), n/3)
	}
	if w := strings.Join(sp.notes, "\n"); !strings.Contains(w, side) || !strings.Contains(w, "the last 40000 are left out") {
		t.Errorf("notes %q, want the file named and 40000 samples left out", sp.notes)
	}
	// What stays held once the file is read, per sample: the sample itself, not
	// copies of its name and labels (about 180 bytes a sample before).
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	held, err := loadMetrics(context.Background(), f, 0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSample := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	runtime.KeepAlive(held)
	t.Logf("%d samples held in %.0f bytes each", len(held.gpu), perSample)
	if len(held.gpu) != n || perSample > 100 {
		t.Errorf("%d samples held in %.0f bytes each, want %d in at most 100", len(held.gpu), perSample, n)
	}
}

// Issue 31 item 7: attaching GPU telemetry to the levels works out each sample's
// GPU once per label text, not once per sample and level (a map per sample).
func TestAttachGPUAllocationsBounded(t *testing.T) {
	path, start, end := gpuRun(t, t.TempDir())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30_000
	base := make([]gpuSample, n)
	for i := range base {
		base[i] = gpuSample{ts: start + int64(i)*(end-start)/n, name: "DCGM_FI_DEV_POWER_USAGE", labels: dcgmLabels, value: 300}
	}
	r := a.Runs[0]
	samples := make([]gpuSample, n)
	allocs := testing.AllocsPerRun(1, func() {
		copy(samples, base)
		r.Warnings = nil
		attachGPU(&r, samples)
	})
	if r.Levels[0].GPU == nil || r.Levels[0].GPU.PowerPerGPUW == nil || *r.Levels[0].GPU.PowerPerGPUW != 300 {
		t.Fatalf("level 0 GPU figures %+v, want 300 W: the test proves nothing", r.Levels[0].GPU)
	}
	t.Logf("%d samples attached to %d levels in %.0f allocations", n, len(r.Levels), allocs)
	if allocs > n/10 {
		t.Errorf("attaching %d GPU samples took %.0f allocations: they grow with the samples", n, allocs)
	}
}

// Issue 31 item 8: exporter values no GPU reports (NaN, ±Inf, ±1e308, a negative
// power, a utilisation above 100 %, a negative memory) are left out when the file
// is read, with a warning naming the series; the level's figures come from the
// values that remain (before: 3.8e+301 J per token, 0 W per GPU).
func TestGPUValuesOutOfRangeLeftOut(t *testing.T) {
	dir := t.TempDir()
	path, start, end := gpuRun(t, dir)
	var samples []trace.MetricSample
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, -1e308, -5}
	i := 0
	for ts := start; ts <= end; ts += 250e6 {
		i++
		power, energy, util, mem := 300.0, float64(1e9+(ts-start)/1e6*300), 50.0, 1000.0
		if i%4 == 0 {
			b := bad[(i/4)%len(bad)]
			power, energy, util, mem = b, b, 1e308, -1
		}
		samples = append(samples,
			trace.MetricSample{TsNs: ts, Name: "DCGM_FI_DEV_POWER_USAGE", Labels: dcgmLabels, Value: power},
			trace.MetricSample{TsNs: ts, Name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Labels: dcgmLabels, Value: energy},
			trace.MetricSample{TsNs: ts, Name: "DCGM_FI_DEV_GPU_UTIL", Labels: dcgmLabels, Value: util},
			trace.MetricSample{TsNs: ts, Name: "DCGM_FI_DEV_FB_USED", Labels: dcgmLabels, Value: mem})
	}
	info, err := trace.ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.WriteMetricsFile(filepath.Join(dir, "run.metrics.parquet"), info, samples); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	for _, l := range r.Levels {
		g := l.GPU
		if g == nil {
			t.Fatalf("level %d: no GPU figures; warnings %q", l.Level, r.Warnings)
		}
		for _, c := range []struct {
			name      string
			got       *float64
			want, tol float64
		}{
			{"W/GPU", g.PowerPerGPUW, 300, 1e-9},
			{"energy rate W", ptr(g.rateW), 300, 3},
			{"util %", g.UtilPct, 50, 1e-9},
			{"memory MiB", g.MemUsedMiB, 1000, 1e-9},
		} {
			if c.got == nil || math.Abs(*c.got-c.want) > c.tol {
				t.Errorf("level %d: %s = %v, want %g", l.Level, c.name, optValue(c.got), c.want)
			}
		}
	}
	w := strings.Join(r.Warnings, "\n")
	for _, series := range []string{"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"} {
		if !strings.Contains(w, "values of "+series+" out of range left out") {
			t.Errorf("no warning names %s out of range: %q", series, r.Warnings)
		}
	}
}

// A server that exports NaN or ±Inf (a gauge with no value yet, a ratio over
// zero) has those samples left out with a warning naming the series, so that
// the analysis stays writable as JSON (json: unsupported value: NaN before).
func TestSidecarNonFiniteLeftOut(t *testing.T) {
	dir := t.TempDir()
	path, _, _ := gpuRun(t, dir)
	var samples []trace.MetricSample
	for i := range 40 {
		v := float64(i % 4)
		if i%5 == 0 {
			v = math.NaN()
		} else if i%7 == 0 {
			v = math.Inf(1)
		}
		samples = append(samples, trace.MetricSample{TsNs: t0 + int64(i)*1e9, Name: "vllm:num_requests_running", Labels: `model_name="m"`, Value: v})
	}
	if err := trace.WriteMetricsFile(filepath.Join(dir, "run.metrics.parquet"), knownInfo(), samples); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1, Resamples: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Fatalf("the analysis is not writable as JSON: %v", err)
	}
	if !containsSubstring(a.Runs[0].Warnings, "values of vllm:num_requests_running are not numbers") {
		t.Errorf("warnings %q do not name the series", a.Runs[0].Warnings)
	}
}
