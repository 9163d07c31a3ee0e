package record

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// endlessExporter serves a DCGM-like page that never ends: a new GPU's power line
// after another, as fast as the client reads. served counts the bytes written and
// scrapes the requests.
func endlessExporter(served, scrapes *atomic.Int64) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		for i := 0; ; i++ {
			var chunk strings.Builder
			for j := range 256 {
				fmt.Fprintf(&chunk, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%d\",Hostname=\"node\"} 300\n", i*256+j, i*256+j)
			}
			n, err := w.Write([]byte(chunk.String()))
			served.Add(int64(n))
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	}))
}

// Issue 31 item 7: one scrape of an endless page reads at most maxMetricsBytes
// (plus what the loopback socket buffers hold) and keeps at most maxScrapeSeries
// samples, with a note saying so; before, 32 MiB a scrape were read and every
// sample kept.
func TestEndlessExporterPageReadToTheBound(t *testing.T) {
	var served, scrapes atomic.Int64
	srv := endlessExporter(&served, &scrapes)
	defer srv.Close()
	c := testClient(t, srv.URL)
	samples, note, err := scrape(context.Background(), c, srv.URL+"/metrics", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != maxScrapeSeries {
		t.Errorf("%d samples kept from an endless page, want the bound %d", len(samples), maxScrapeSeries)
	}
	if !strings.Contains(note, "longer than 4 MiB") || !strings.Contains(note, "only the first 10000") {
		t.Errorf("note %q, want the byte and series bounds named", note)
	}
	// The server stops writing when the client closes; what it wrote beyond the
	// bytes read sat in socket buffers (a few MiB on loopback at most).
	srv.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	if got := served.Load(); got > maxMetricsBytes+8<<20 {
		t.Errorf("the server wrote %d MiB for one scrape, want about the %d MiB bound", got>>20, maxMetricsBytes>>20)
	}
}

// testClient is a client of the test server at url, as Record makes one.
func testClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{BaseURL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Issue 31 item 7, the recorder: a run whose GPU exporter streams forever keeps at
// most maxScrapeSeries samples a scrape in its metrics sidecar and warns, naming
// the exporter, that the page went past the bounds.
func TestRecordEndlessExporterBounded(t *testing.T) {
	// 40 requests of 8 tokens 5 ms apart: the sweep lasts well over a second, so
	// scrapes finish inside it.
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 5 * time.Millisecond, Kind: "vllm", KVTokens: 100000})
	defer eng.Close()
	var served, scrapes atomic.Int64
	srv := endlessExporter(&served, &scrapes)
	defer srv.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1}
	o.RequestsPerLevel = 40
	o.ScrapeInterval = 100 * time.Millisecond
	o.GPUMetricsURLs = []string{srv.URL + "/metrics"}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	source := strings.TrimPrefix(srv.URL, "http://")
	if w := strings.Join(info.Warnings, "\n"); !strings.Contains(w, "GPU exporter "+source+": its page is longer than 4 MiB") {
		t.Errorf("warnings %q do not name the exporter's page past the bound", info.Warnings)
	}
	_, samples, err := trace.ReadMetricsFile(trace.MetricsPath(o.Output))
	if err != nil {
		t.Fatal(err)
	}
	perScrape := map[int64]int{}
	for _, s := range samples {
		if s.Name == "DCGM_FI_DEV_POWER_USAGE" {
			perScrape[s.TsNs]++
		}
	}
	if len(perScrape) == 0 {
		t.Fatal("no exporter sample kept: the test proves nothing")
	}
	for ts, n := range perScrape {
		if n > maxScrapeSeries {
			t.Errorf("scrape at %d kept %d samples, want at most %d", ts, n, maxScrapeSeries)
		}
	}
	if n := scrapes.Load(); served.Load() > n*(maxMetricsBytes+8<<20) {
		t.Errorf("%d MiB served to %d scrapes: more than the bound a scrape", served.Load()>>20, n)
	}
}

// Issue 31 item 7: the samples waiting for a seal are bounded, with one warning
// naming the source, and a name or label text repeated scrape after scrape is
// held once.
func TestHeldMetricsBounded(t *testing.T) {
	h := heldMetrics{max: 100}
	scrapeOf := func(ts int64, n int) []trace.MetricSample {
		s := make([]trace.MetricSample, n)
		for i := range s {
			s[i] = trace.MetricSample{TsNs: ts, Name: strings.Clone("vllm:num_requests_running"), Labels: strings.Clone(`model_name="m"`), Value: 1}
		}
		return s
	}
	var warned []string
	for ts := range int64(3) {
		warned = append(warned, h.keep("server metrics x:1", scrapeOf(ts, 60), "")...)
	}
	if len(h.samples) != 100 {
		t.Errorf("%d samples held, want the bound 100", len(h.samples))
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "server metrics x:1") || !strings.Contains(warned[0], "dropped") {
		t.Errorf("warnings %q, want one naming the source and the drop", warned)
	}
	if unsafe.StringData(h.samples[0].Labels) != unsafe.StringData(h.samples[99].Labels) ||
		unsafe.StringData(h.samples[0].Name) != unsafe.StringData(h.samples[99].Name) {
		t.Error("a label text repeated scrape after scrape is held once per sample, not once")
	}
	if got := len(h.take()); got != 100 {
		t.Errorf("take gave %d samples", got)
	}
	if w := h.keep("server metrics x:1", scrapeOf(4, 60), ""); len(h.samples) != 60 || len(w) != 0 {
		t.Errorf("after a seal: %d held, warnings %q; want 60 and none again", len(h.samples), w)
	}
}
