package client

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// benchWave sizes one benchmark operation: `streams` concurrent requests of `tokens`
// one-token chunks each, about 256k chunks a wave.
func benchTokens(streams int) int { return max(64, 262144/streams) }

// benchPrompt gives request i a prompt of i+1 words, so that the engine's log
// (which counts prompt tokens) tells the requests apart.
func benchPrompt(i int) string {
	return strings.TrimSpace(strings.Repeat("w ", i+1))
}

// BenchmarkClientStreams measures the streaming client against a fast in-process
// engine (TokenGap 0): chunks ingested per second and per CPU-second (the whole
// process: the engine shares it), and the timestamp error, the recorded chunk time
// minus the engine's send time (p50/p99 over every chunk of the last wave).
//
//	go test ./record/internal/client -run '^$' -bench 'ClientStreams|BareReader' -benchtime 3x
func BenchmarkClientStreams(b *testing.B) {
	for _, streams := range []int{64, 1024, 4096} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			benchStreams(b, streams, false)
		})
	}
}

// BenchmarkBareReader reads the same streams with a reader that only counts
// bytes: the ceiling a client could reach, to compare the recorder with.
func BenchmarkBareReader(b *testing.B) {
	for _, streams := range []int{64, 1024, 4096} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			benchStreams(b, streams, true)
		})
	}
}

// BenchmarkClientPaced measures the timestamp error when the engine paces its
// tokens, so that the error is the recorder's own delay rather than a backlog of
// chunks that an unpaced engine writes faster than anyone reads them. 4096 streams
// with a chunk every 40 ms each offer about 100,000 chunks/s, the target rate.
func BenchmarkClientPaced(b *testing.B) {
	for _, c := range []struct {
		streams int
		gap     time.Duration
	}{{1024, 20 * time.Millisecond}, {4096, 40 * time.Millisecond}, {4096, 80 * time.Millisecond}} {
		b.Run(fmt.Sprintf("streams=%d/gap=%s", c.streams, c.gap), func(b *testing.B) {
			benchStreamsGap(b, c.streams, pacedTokens(c.gap), c.gap, false)
		})
	}
}

// pacedTokens is the stream length of a paced benchmark: at least 64 chunks and 5 s,
// so that a steady state (every stream open) remains after a ramp-up of seconds,
// which 4096 streams take when the engine or the recorder falls behind.
func pacedTokens(gap time.Duration) int { return max(64, int(5*time.Second/gap)) }

func benchStreams(b *testing.B, streams int, bare bool) {
	benchStreamsGap(b, streams, benchTokens(streams), 0, bare)
}

func benchStreamsGap(b *testing.B, streams, tokens int, gap time.Duration, bare bool) {
	eng := enginetest.New(enginetest.Config{Model: "bench", RecordChunkTimes: true, TokenGap: gap})
	defer eng.Close()
	runWaves(b, eng.URL(), streams, tokens, gap, bare, func(since time.Time) (map[int][]int64, error) {
		return sentSince(eng.Log(), since), nil
	})
}

// sentLog returns, once the last wave is over, the engine's send time (Unix ns) of
// each token chunk of the requests it received at or after since, keyed by prompt
// tokens (request i has i+1, see benchPrompt).
type sentLog func(since time.Time) (map[int][]int64, error)

// sentSince turns an engine log into what a sentLog returns.
func sentSince(log []enginetest.RequestLog, since time.Time) map[int][]int64 {
	out := map[int][]int64{}
	for _, e := range log {
		if e.Received.Before(since) {
			continue
		}
		ts := make([]int64, len(e.ChunkTimes))
		for i, t := range e.ChunkTimes {
			ts[i] = t.UnixNano()
		}
		out[e.PromptTokens] = ts
	}
	return out
}

// runWaves runs b.N waves of `streams` concurrent requests of `tokens` chunks
// against the engine at url, and reports chunks/s, chunks/cpu-s (this process only)
// and, unless bare, the timestamp error of the last wave against sent.
func runWaves(b *testing.B, url string, streams, tokens int, gap time.Duration, bare bool, sent sentLog) {
	c, err := New(Options{BaseURL: url, Endpoint: "completions", Model: "bench",
		Timeout: time.Minute, MaxConns: streams})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()

	if gap > 0 {
		// Open the connections first, with one short request per stream, so that
		// the measured waves reuse them as a recorder's sweep does after its first
		// requests. Opening thousands at once takes seconds, during which the early
		// streams run alone, and a 64-chunk wave then has no steady state.
		var wg sync.WaitGroup
		results := make([]Result, streams)
		for i := range streams {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				results[i] = c.Do(context.Background(), Prompt{Text: "warm"}, 1)
			}(i)
		}
		wg.Wait()
		if e := firstErr(results); e != "" {
			b.Fatalf("warm-up: %s", e)
		}
	}

	var chunks, clientErrors int64
	var cpu, wall time.Duration
	var lastResults []Result
	var lastStart time.Time
	b.ResetTimer()
	for range b.N {
		results := make([]Result, streams)
		var wg sync.WaitGroup
		start := time.Now()
		cpu0 := cpuTime()
		for i := range streams {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				// Paced streams start evenly spread over one gap, so chunks arrive
				// at a steady rate. Started together they would arrive in bursts of
				// one chunk per stream, and the error would measure the burst (a
				// server's decode step does that; see the README), not the recorder.
				time.Sleep(gap * time.Duration(i) / time.Duration(streams))
				if bare {
					results[i] = bareRead(c, benchPrompt(i), tokens)
				} else {
					results[i] = c.Do(context.Background(), Prompt{Text: benchPrompt(i)}, tokens)
				}
			}(i)
		}
		wg.Wait()
		wall += time.Since(start)
		cpu += cpuTime() - cpu0
		for _, r := range results {
			if r.Err != "" {
				clientErrors++
				continue
			}
			chunks += int64(tokens)
		}
		lastResults, lastStart = results, start
	}
	b.StopTimer()
	if clientErrors > 0 {
		b.Errorf("%d client errors (first: %s)", clientErrors, firstErr(lastResults))
	}
	b.ReportMetric(float64(chunks)/wall.Seconds(), "chunks/s")
	b.ReportMetric(float64(chunks)/cpu.Seconds(), "chunks/cpu-s")
	b.ReportMetric(0, "ns/op")
	if bare {
		return
	}
	byPrompt, err := sent(lastStart)
	if err != nil {
		b.Fatal(err)
	}
	errs, rampEnd, drainStart := timestampErrors(lastResults, byPrompt)
	if len(errs) == 0 {
		if len(byPrompt) < streams {
			b.Fatalf("no chunk matched the engine's log (%d of %d requests in it)", len(byPrompt), streams)
		}
		// The engine or the recorder fell behind the offered load (streams/gap
		// chunks/s, compare chunks/s): the last stream got its first chunk only
		// after the first had ended. The error is then the backlog, not a delay,
		// so it is not reported; chunks/s says how far behind.
		b.Logf("no steady state, the load exceeds this machine: the last stream's first chunk was sent %s after the wave started, the first stream's last chunk %s after",
			time.Duration(rampEnd-lastStart.UnixNano()), time.Duration(drainStart-lastStart.UnixNano()))
		return
	}
	slices.Sort(errs)
	b.ReportMetric(quantile(errs, 0.5), "ts-err-p50-ms")
	b.ReportMetric(quantile(errs, 0.99), "ts-err-p99-ms")
}

// timestampErrors returns, in ms, the recorded chunk time minus the engine's send
// time of every chunk of results (request i's send times are sent[i+1]) that was
// sent while every stream was open: the steady state that the analyzer's window
// also keeps. While thousands of connections open at once, the first chunks wait
// behind TCP and HTTP set-up, which measures the ramp-up, not the recorder. It
// also returns that window: [rampEnd, drainStart] in Unix ns.
func timestampErrors(results []Result, sent map[int][]int64) (errs []float64, rampEnd, drainStart int64) {
	for _, ts := range sent {
		if len(ts) == 0 {
			continue
		}
		rampEnd = max(rampEnd, ts[0])
		if last := ts[len(ts)-1]; drainStart == 0 || last < drainStart {
			drainStart = last
		}
	}
	for i, r := range results {
		ts, ok := sent[i+1]
		if !ok || r.FirstTokenNs == 0 || len(ts) != len(r.GapsUs)+1 {
			continue
		}
		at := r.FirstTokenNs
		for j, t := range ts {
			if j > 0 {
				at += int64(r.GapsUs[j-1]) * 1000
			}
			if t < rampEnd || t > drainStart {
				continue
			}
			errs = append(errs, float64(at-t)/1e6)
		}
	}
	return errs, rampEnd, drainStart
}

func firstErr(rs []Result) string {
	for _, r := range rs {
		if r.Err != "" {
			return r.Err
		}
	}
	return ""
}

// bareRead sends the same request and only counts the bytes of the response.
func bareRead(c *Client, prompt string, tokens int) Result {
	body, _ := c.body(Prompt{Text: prompt}, tokens)
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{Err: err.Error()}
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return Result{Err: err.Error()}
	}
	return Result{Status: resp.StatusCode}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quantile interpolates linearly between order statistics of sorted v.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	pos := q * float64(len(v)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(v)-1)
	return v[lo] + (v[hi]-v[lo])*(pos-float64(lo))
}
