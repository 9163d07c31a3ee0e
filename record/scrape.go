package record

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/internal/prom"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// scrapeMetrics polls url every interval until ctx ends, passing each scrape's
// samples to sink. Failed scrapes are counted, not fatal: a metrics endpoint that
// hiccups must not stop a sweep.
func scrapeMetrics(ctx context.Context, c *client.Client, url string, interval time.Duration, sink func([]trace.MetricSample)) (failures int) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ts := time.Now().UnixNano()
		if samples, err := scrape(ctx, c, url, ts); err == nil {
			sink(samples)
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

// maxMetricsBytes bounds one metrics page.
const maxMetricsBytes = 32 << 20

// scrape fetches and parses one metrics page, stamping its samples ts. Lines the
// parser cannot read are left out, as the rest of the page is still good.
func scrape(ctx context.Context, c *client.Client, url string, ts int64) ([]trace.MetricSample, error) {
	body, err := c.Fetch(ctx, url, maxMetricsBytes)
	if err != nil {
		return nil, err
	}
	samples, _ := prom.Parse(bytes.NewReader(body))
	out := make([]trace.MetricSample, len(samples))
	for i, s := range samples {
		out[i] = trace.MetricSample{TsNs: ts, Name: s.Name, Labels: c.RedactSecrets(s.Labels), Value: s.Value}
	}
	return out, nil
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
