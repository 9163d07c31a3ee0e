package record

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/report"
)

// dcgmExporter serves a DCGM exporter page in the shape NVIDIA's documentation
// shows (UUID/device/Hostname labels, HELP and TYPE lines): each GPU draws a
// constant power, and its energy counter (mJ) rises at exactly that power from the
// exporter's start. energy false leaves the counter out (a missing field).
func dcgmExporter(t *testing.T, host string, watts []float64, energy bool, scrapes *atomic.Int64) *httptest.Server {
	start := time.Now()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		elapsed := time.Since(start).Seconds()
		var b strings.Builder
		b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		for i, p := range watts {
			fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%s-%d\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"%s\"} %f\n", i, host, i, i, host, p)
		}
		if energy {
			b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
			for i, p := range watts {
				fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=\"GPU-%s-%d\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"%s\"} %d\n", i, host, i, i, host, int64(1e9+p*elapsed*1000))
			}
		}
		b.WriteString("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
		for i := range watts {
			fmt.Fprintf(&b, "DCGM_FI_DEV_GPU_UTIL{gpu=\"%d\",UUID=\"GPU-%s-%d\",device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"%s\"} 80\n", i, host, i, i, host)
		}
		_, _ = w.Write([]byte(b.String()))
	}))
}

// TestRecordGPUEnergy records against the test engine while two DCGM-like
// exporters (two nodes) serve known power: node A two GPUs at 300 and 200 W with
// energy counters, node B one GPU at 100 W without one. Every level must have
// 200 W per GPU (600 W / 3) and J/token = 600 W × window / the window's output
// tokens, computed here by hand from the level's own window and token count.
func TestRecordGPUEnergy(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 20 * time.Millisecond, TokenGap: 5 * time.Millisecond, Kind: "vllm", KVTokens: 100000})
	defer eng.Close()
	var scrapesA, scrapesB atomic.Int64
	a := dcgmExporter(t, "node-a", []float64{300, 200}, true, &scrapesA)
	defer a.Close()
	b := dcgmExporter(t, "node-b", []float64{100}, false, &scrapesB)
	defer b.Close()

	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 4}
	o.RequestsPerLevel = 24
	o.OutputTokens = 32
	o.ScrapeInterval = 20 * time.Millisecond
	o.GPUMetricsURLs = []string{a.URL + "/metrics", b.URL + "/metrics"}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if scrapesA.Load() < 5 || scrapesB.Load() < 5 {
		t.Fatalf("exporters scraped %d and %d times", scrapesA.Load(), scrapesB.Load())
	}
	if got := info.Server.GPUMetricsURLs; len(got) != 2 || got[0] != a.URL+"/metrics" {
		t.Errorf("run info names GPU exporters %q", got)
	}
	res, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{TimelineLevel: -1,
		Decision: analyze.DecisionOptions{GPUHourCost: 2, PowerCostKWh: 0.1, PUE: 1.2}})
	if err != nil {
		t.Fatal(err)
	}
	run := res.Runs[0]
	const totalW = 600.0
	for _, l := range run.Levels {
		g := l.GPU
		if g == nil {
			t.Fatalf("level %d: no GPU figures (warnings %q)", l.Level, run.Warnings)
		}
		if g.GPUs != 3 || g.PowerPerGPUW == nil || math.Abs(*g.PowerPerGPUW-totalW/3) > 1e-9 {
			t.Errorf("level %d: %d GPUs at %v W/GPU, want 3 at 200", l.Level, g.GPUs, optF(g.PowerPerGPUW))
		}
		if l.WindowS <= 0 || l.WindowOutputTokens <= 0 {
			t.Fatalf("level %d: window %g s, %g tokens", l.Level, l.WindowS, l.WindowOutputTokens)
		}
		// By hand: 600 W over the window, divided by the tokens that arrived in it.
		// The counters are read a few µs after the scrape is stamped, hence 1%.
		want := totalW * l.WindowS / l.WindowOutputTokens
		if g.JPerOutputToken == nil || math.Abs(*g.JPerOutputToken-want) > 0.01*want {
			t.Errorf("level %d: %v J/token, want %g (600 W × %g s / %g tokens)", l.Level, optF(g.JPerOutputToken), want, l.WindowS, l.WindowOutputTokens)
		}
		if !strings.Contains(g.EnergySource, "2 of 3") {
			t.Errorf("level %d: energy source %q, want the counters of 2 of 3 GPUs", l.Level, g.EnergySource)
		}
	}
	d := run.Decision
	if d == nil || len(d.Levels) == 0 || d.Levels[0].Energy == nil || d.Levels[0].Energy.EnergyCostPerMOutput == nil || d.Levels[0].Energy.EnergyShare == nil {
		t.Fatalf("decision without energy cost: %+v", d)
	}
	if !strings.Contains(strings.Join(d.Notes, "\n"), "the GPU exporters reported 3 GPUs, the deployment counts 1") {
		t.Errorf("no note that the telemetry's 3 GPUs are not the 1 the cost counts: %q", d.Notes)
	}

	// The report of this recorded run, not of a fixture, shows it: the power and
	// energy panel, the ceiling's W per GPU, and the exporters in the deployment line.
	var page bytes.Buffer
	if err := report.Write(&page, res, report.Options{}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"GPU power per GPU", "Energy per output token", "200 W per GPU", "J per output token",
		strings.TrimPrefix(a.URL, "http://")} {
		if !strings.Contains(html, want) {
			t.Errorf("the report of the recorded run lacks %q", want)
		}
	}
}

func optF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A GPU exporter that does not answer, or serves no power series, is a warning in
// the run info, and the recording goes on.
func TestRecordGPUExporterProblems(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond, Kind: "vllm", KVTokens: 100000})
	defer eng.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	defer down.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("# TYPE node_load1 gauge\nnode_load1 0.5\n"))
	}))
	defer other.Close()
	o := baseOptions(t, eng.URL())
	o.GPUMetricsURLs = []string{down.URL + "/metrics", other.URL + "/metrics"}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(info.Warnings, "\n")
	for _, want := range []string{"GPU exporter " + strings.TrimPrefix(down.URL, "http://") + " did not answer", "GPU exporter " + strings.TrimPrefix(other.URL, "http://") + " answered with 1 series but none"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", info.Warnings, want)
		}
	}
	if len(info.Levels) != 2 {
		t.Errorf("%d levels recorded, want the sweep to go on", len(info.Levels))
	}
}
