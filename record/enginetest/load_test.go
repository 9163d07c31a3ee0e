package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// loadClient is an HTTP client that opens as many connections as asked.
func loadClient(streams int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        streams,
		MaxIdleConnsPerHost: streams,
		DisableCompression:  true,
	}}
}

// countStream reads one stream, counting events and checking it ends with [DONE].
func countStream(ctx context.Context, c *http.Client, url string, body []byte) (events int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, 16<<10)
	last := ""
	for {
		line, err := br.ReadSlice('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return events, err
		}
		if bytes.HasPrefix(line, []byte("data: ")) {
			events++
			last = string(line)
		}
	}
	if last != "data: [DONE]\n" {
		return events, fmt.Errorf("stream ended with %q", last)
	}
	return events, nil
}

// runLoad opens streams concurrent streams of outTokens tokens each.
func runLoad(ctx context.Context, s *Server, c *http.Client, streams, outTokens int) (events int64, err error) {
	body, _ := json.Marshal(chatBody("hello", outTokens))
	var wg sync.WaitGroup
	var total atomic.Int64
	var firstErr error
	var mu sync.Mutex
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := countStream(ctx, c, s.URL(), body)
			total.Add(int64(n))
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return total.Load(), firstErr
}

// TestManyConcurrentStreams is a smoke test: 2000 streams at once, TokenGap 0. The
// long TTFT keeps every stream open while the client is still opening the others,
// so they really are concurrent.
func TestManyConcurrentStreams(t *testing.T) {
	streams, out := 2000, 32
	if raceEnabled {
		streams = 500
	}
	s := New(Config{TTFT: 1500 * time.Millisecond})
	defer s.Close()
	c := loadClient(streams)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	events, err := runLoad(ctx, s, c, streams, out)
	if err != nil {
		t.Fatal(err)
	}
	// role + out tokens + finish + usage + [DONE] per stream.
	if want := int64(streams * (out + 4)); events != want {
		t.Errorf("%d events, want %d", events, want)
	}
	// Peak number of requests in the engine at once.
	type ev struct {
		t time.Time
		d int
	}
	var evs []ev
	for _, l := range s.Log() {
		if !l.Completed || l.OutputTokens != out {
			t.Fatalf("request not completed: %+v", l)
		}
		evs = append(evs, ev{l.Received, 1}, ev{l.Ended, -1})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].t.Before(evs[j].t) })
	open, peak := 0, 0
	for _, e := range evs {
		open += e.d
		peak = max(peak, open)
	}
	t.Logf("%d streams, peak %d open at once", streams, peak)
	if peak < streams/2 {
		t.Errorf("only %d of %d streams were open at once", peak, streams)
	}
}

// BenchmarkEngineStreams measures the engine serving streams of 256 tokens as fast
// as it can to bare readers; it bounds what a recorder benchmark against this engine
// can ingest. Reports token chunks per second.
func BenchmarkEngineStreams(b *testing.B) {
	for _, streams := range []int{64, 1024, 4096} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			const out = 256
			s := New(Config{})
			defer s.Close()
			c := loadClient(streams)
			defer c.CloseIdleConnections()
			start := time.Now()
			var events int64
			for b.Loop() {
				n, err := runLoad(b.Context(), s, c, streams, out)
				if err != nil {
					b.Fatal(err)
				}
				events += n
			}
			b.ReportMetric(float64(int64(b.N)*int64(streams)*out)/time.Since(start).Seconds(), "chunks/s")
		})
	}
}

// BenchmarkSchedulerStreams measures a step scheduler's loop overhead: the vLLM
// scheduler with steps of 1ns (so the loop, not the modelled step time, bounds it)
// serving streams of 256 tokens in a cache that holds them all. Reports token chunks
// per second.
func BenchmarkSchedulerStreams(b *testing.B) {
	for _, streams := range []int{64, 1024} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			const out = 256
			s := New(Config{Scheduler: SchedulerVLLM, KVTokens: 1 << 22, Slots: streams, StepTime: time.Nanosecond})
			defer s.Close()
			c := loadClient(streams)
			defer c.CloseIdleConnections()
			start := time.Now()
			for b.Loop() {
				if _, err := runLoad(b.Context(), s, c, streams, out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(int64(b.N)*int64(streams)*out)/time.Since(start).Seconds(), "chunks/s")
		})
	}
}
