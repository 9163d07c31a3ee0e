package record

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/internal/prom"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// scrapeMetrics polls url every interval until ctx ends, passing each scrape's
// samples to sink, with a note when the page went past a bound (pageBounds).
// Failed scrapes are counted, not fatal: a metrics endpoint that hiccups must not
// stop a sweep.
func scrapeMetrics(ctx context.Context, c *client.Client, url string, interval time.Duration, sink func(samples []trace.MetricSample, note string)) (failures int) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ts := time.Now().UnixNano()
		if samples, note, err := scrape(ctx, c, url, ts); err == nil {
			sink(samples, note)
		} else if ctx.Err() == nil {
			failures++
		}
		select {
		case <-ctx.Done():
			return failures
		case <-t.C:
		}
	}
}

// What one scrape reads and keeps is bounded: a metrics page of an engine or a GPU
// exporter is tens to hundreds of KiB and a few thousand series (vLLM's histograms
// included; DCGM's ~40 fields × 8 GPUs), so these bounds are far above any real
// page, while an endless or hostile page costs at most this much per scrape (it
// held 32 MiB a scrape, kept without bound: 2.4 GB after 45 s).
const (
	maxMetricsBytes = 4 << 20 // bytes of one page read
	maxScrapeSeries = 10_000  // samples kept from one page
)

// scrape fetches and parses one metrics page, stamping its samples ts. Lines the
// parser cannot read are left out, as the rest of the page is still good. A page
// longer than maxMetricsBytes is read to its last whole line inside the bound, and
// only the first maxScrapeSeries samples are kept; note then says which bound was
// hit.
func scrape(ctx context.Context, c *client.Client, url string, ts int64) (samples []trace.MetricSample, note string, err error) {
	body, err := c.Fetch(ctx, url, maxMetricsBytes+1)
	if err != nil {
		return nil, "", err
	}
	var notes []string
	if len(body) > maxMetricsBytes {
		body = body[:bytes.LastIndexByte(body[:maxMetricsBytes], '\n')+1]
		notes = append(notes, fmt.Sprintf("its page is longer than %d MiB: only the first %d MiB of each scrape is read", maxMetricsBytes>>20, maxMetricsBytes>>20))
	}
	parsed, _ := prom.Parse(bytes.NewReader(body))
	if len(parsed) > maxScrapeSeries {
		notes = append(notes, fmt.Sprintf("a scrape served %d series: only the first %d of each scrape are kept", len(parsed), maxScrapeSeries))
		parsed = parsed[:maxScrapeSeries]
	}
	out := make([]trace.MetricSample, len(parsed))
	for i, s := range parsed {
		out[i] = trace.MetricSample{TsNs: ts, Name: s.Name, Labels: c.RedactSecrets(s.Labels), Value: s.Value}
	}
	return out, strings.Join(notes, "; "), nil
}

// gpuSourceLabel names a GPU exporter by its host and port (never its path, query
// or credentials): the node its GPUs are in.
func gpuSourceLabel(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "unknown"
	}
	return u.Host
}

// withLabel appends name="value" to a canonical label text.
func withLabel(labels, name, value string) string {
	v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(value)
	if labels == "" {
		return name + `="` + v + `"`
	}
	return labels + "," + name + `="` + v + `"`
}
