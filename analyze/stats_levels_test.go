package analyze

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// t0 is an arbitrary Unix time in ns; the rows below are ms offsets from it.
const t0 = int64(1_750_000_000_000_000_000)

func ms(v float64) int64 { return t0 + int64(v*1e6) }

func i32(v int32) *int32    { return &v }
func i64p(v int64) *int64   { return &v }
func strp(v string) *string { return &v }

// engineRow is a request as the test engine serves it: a first chunk ttft after the
// send, then one chunk per gap.
func engineRow(level, conc, worker int32, id int64, sentMs, ttftMs float64, gapsUs []int32, out int32) trace.Row {
	first := ms(sentMs + ttftMs)
	end := first
	for _, g := range gapsUs {
		end += int64(g) * 1000
	}
	return trace.Row{
		RunID: "run-a", Level: level, Concurrency: conc, RequestID: id, Worker: worker,
		ScheduledNs: ms(sentMs), SentNs: ms(sentMs), FirstTokenNs: i64p(first), FirstContentNs: i64p(first),
		EndNs: end, ChunkGapsUs: gapsUs, PromptTokens: i32(10), OutputTokens: i32(out),
		TokensSource: "usage", TargetPromptTokens: 10, MaxTokens: 5, Status: 200, FinishReason: strp("length"),
	}
}

func gaps(n int, us int32) []int32 {
	g := make([]int32, n)
	for i := range g {
		g[i] = us
	}
	return g
}

// knownRows is a two-level trace with timings chosen so that every statistic can be
// worked out by hand (see TestKnownTrace).
func knownRows() []trace.Row {
	rows := []trace.Row{
		// A warm-up request: excluded from everything.
		func() trace.Row {
			r := engineRow(0, 2, 0, 0, -500, 300, gaps(4, 10000), 5)
			r.Warmup = true
			return r
		}(),
		// Level 0, concurrency 2: 5 tokens per request, one per chunk, 10 ms apart.
		engineRow(0, 2, 0, 1, 0, 100, gaps(4, 10000), 5),   // A: 0 → 100 → 140
		engineRow(0, 2, 1, 2, 10, 100, gaps(4, 10000), 5),  // C: 10 → 110 → 150
		engineRow(0, 2, 0, 3, 140, 100, gaps(4, 10000), 5), // B: 140 → 240 → 280
		engineRow(0, 2, 1, 4, 150, 120, gaps(4, 10000), 5), // D: 150 → 270 → 310
		// Level 1, concurrency 1: 6 usage tokens in 3 chunks (5 ms then 15 ms apart),
		// then a 429 and a timeout.
		engineRow(1, 1, 0, 5, 1000, 50, []int32{5000, 15000}, 6), // E: 1000 → 1050 → 1070
	}
	fail := func(id int64, sent, end float64, status int32, msg string) trace.Row {
		return trace.Row{RunID: "run-a", Level: 1, Concurrency: 1, RequestID: id, ScheduledNs: ms(sent), SentNs: ms(sent),
			EndNs: ms(end), TokensSource: "chunks", TargetPromptTokens: 10, MaxTokens: 5, Status: status, Error: strp(msg)}
	}
	rows = append(rows,
		fail(6, 1070, 1071, 429, "HTTP 429: too many requests"),
		fail(7, 1071, 1171, 0, "context deadline exceeded (Client.Timeout)"),
	)
	return rows
}

func knownInfo() trace.RunInfo {
	kv := int64(8192)
	return trace.RunInfo{
		Tool: "ceiling", Version: "test", RunID: "run-a", Started: time.Unix(0, t0),
		Target: trace.Target{BaseURL: "http://127.0.0.1:1", Endpoint: "chat", Model: "tiny"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: []int{2, 1}, Warmup: 1},
		Server: trace.ServerInfo{Kind: "llamacpp", KVCapacityTokens: &kv},
		Levels: []trace.LevelInfo{{Level: 0, Concurrency: 2}, {Level: 1, Concurrency: 1, ClientCPUUtil: 0.93}},
	}
}

func writeTrace(t *testing.T, dir, name string, info trace.RunInfo, rows []trace.Row) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
	return path
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g (±%g)", what, got, want, tol)
	}
}

func nearP(t *testing.T, what string, got *float64, want, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s = null, want %g", what, want)
		return
	}
	near(t, what, *got, want, tol)
}

func checkSummary(t *testing.T, what string, s Summary, n int, mean, p50, p90, p95, p99 float64) {
	t.Helper()
	if s.N != n {
		t.Errorf("%s n = %d, want %d", what, s.N, n)
	}
	const tol = 1e-12
	nearP(t, what+" mean", s.Mean, mean, tol)
	nearP(t, what+" p50", s.P50, p50, tol)
	nearP(t, what+" p90", s.P90, p90, tol)
	nearP(t, what+" p95", s.P95, p95, tol)
	nearP(t, what+" p99", s.P99, p99, tol)
}

// TestKnownTrace analyzes a trace with engine-style timings to the numbers worked
// out by hand in the comments.
func TestKnownTrace(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	opt := Options{SLO: SLO{TTFT: ptr(0.1)}, TimelineLevel: 0}
	a, err := Analyze(context.Background(), []string{path}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(a.Runs))
	}
	r := a.Runs[0]
	if r.RunID != "run-a" || r.Model != "tiny" || r.Source != path {
		t.Errorf("run id/model/source = %q %q %q", r.RunID, r.Model, r.Source)
	}
	if len(r.Levels) != 2 {
		t.Fatalf("got %d levels, want 2", len(r.Levels))
	}

	// Level 0. Window: every worker busy from the last first send (10 ms) until the
	// first worker runs out of work (worker 0 ends at 280 ms): 270 ms.
	l := r.Levels[0]
	if l.Requests != 4 || l.Errors != 0 || l.Concurrency != 2 {
		t.Errorf("level 0 requests/errors/concurrency = %d/%d/%d, want 4/0/2", l.Requests, l.Errors, l.Concurrency)
	}
	near(t, "window_s", l.WindowS, 0.270, 1e-12)
	near(t, "window_start_s", l.WindowStartS, 0.010, 1e-12)
	near(t, "window_end_s", l.WindowEndS, 0.280, 1e-12)
	// Chunks inside [10, 280] ms: A 5, C 5, B 5 (its last at 280), D 2 (270, 280).
	near(t, "output_tok_s", l.OutputTokS, 17/0.270, 1e-9)
	// Completions inside: A (140), C (150), B (280).
	near(t, "request_s", l.RequestS, 3/0.270, 1e-9)
	// Naive: 20 tokens, 4 requests over 0 → 310 ms.
	near(t, "naive_output_tok_s", l.NaiveOutputTokS, 20/0.310, 1e-9)
	near(t, "naive_request_s", l.NaiveRequestS, 4/0.310, 1e-9)
	// Goodput under TTFT ≤ 100 ms: A, C, B complete inside and meet it.
	nearP(t, "goodput", l.GoodputRequestS, 3/0.270, 1e-9)
	// Decode time inside: A 40, C 40, B 40, D 10 (270 → 280) = 130 ms.
	near(t, "decode_concurrency", l.DecodeConcurrency, 0.130/0.270, 1e-9)
	// Waiting inside: A 90 (10 → 100), C 100, B 100, D 120 = 410 ms.
	near(t, "waiting_concurrency", l.WaitingConcurrency, 0.410/0.270, 1e-9)
	near(t, "per_user_tok_s", l.PerUserTokS, 5/0.040, 1e-9)
	// 17 of the level's 20 tokens arrive inside the window: the window count, not the
	// level total, is what output_tok_s divides.
	near(t, "window_output_tokens", l.WindowOutputTokens, 17, 1e-9)
	near(t, "window tokens / window", l.WindowOutputTokens/l.WindowS, l.OutputTokS, 1e-9)
	if l.LevelOutputTokens != 20 || l.OutputTokens != l.LevelOutputTokens {
		t.Errorf("level output tokens = %d (old name %d), want 20", l.LevelOutputTokens, l.OutputTokens)
	}
	near(t, "mean prompt", l.MeanPromptTokens, 10, 0)
	near(t, "mean output", l.MeanOutputTokens, 5, 0)
	// TTFT 100, 100, 100, 120 ms: p90 at h = 2.7 → 100 + 0.7·20 = 114.
	checkSummary(t, "ttft", l.TTFT, 4, 0.105, 0.100, 0.114, 0.117, 0.1194)
	checkSummary(t, "ttfc", l.TTFC, 4, 0.105, 0.100, 0.114, 0.117, 0.1194)
	checkSummary(t, "e2e", l.E2E, 4, 0.145, 0.140, 0.154, 0.157, 0.1594)
	checkSummary(t, "tpot", l.TPOT, 4, 0.010, 0.010, 0.010, 0.010, 0.010)
	checkSummary(t, "itl", l.ITL, 16, 0.010, 0.010, 0.010, 0.010, 0.010)
	if l.ITLHistogram == nil || sum(l.ITLHistogram.Counts) != 16 {
		t.Errorf("itl histogram = %+v, want 16 gaps", l.ITLHistogram)
	}

	// Level 1: one worker, window = the whole level, 1000 → 1171 ms.
	l = r.Levels[1]
	if l.Requests != 3 || l.Errors != 2 {
		t.Errorf("level 1 requests/errors = %d/%d, want 3/2", l.Requests, l.Errors)
	}
	if l.ErrorKinds["http_429"] != 1 || l.ErrorKinds["timeout"] != 1 {
		t.Errorf("error kinds = %v, want http_429 1, timeout 1", l.ErrorKinds)
	}
	near(t, "l1 window_s", l.WindowS, 0.171, 1e-12)
	near(t, "l1 output_tok_s", l.OutputTokS, 6/0.171, 1e-9)
	near(t, "l1 request_s", l.RequestS, 1/0.171, 1e-9)
	nearP(t, "l1 goodput", l.GoodputRequestS, 1/0.171, 1e-9)
	near(t, "l1 decode", l.DecodeConcurrency, 0.020/0.171, 1e-9)
	// Waiting: E 50 ms, the 429 1 ms, the timeout 100 ms.
	near(t, "l1 waiting", l.WaitingConcurrency, 0.151/0.171, 1e-9)
	// TPOT (70 − 50) / (6 − 1) = 4 ms; ITL 5 and 15 ms.
	checkSummary(t, "l1 tpot", l.TPOT, 1, 0.004, 0.004, 0.004, 0.004, 0.004)
	checkSummary(t, "l1 itl", l.ITL, 2, 0.010, 0.010, 0.014, 0.0145, 0.0149)
	checkSummary(t, "l1 ttft", l.TTFT, 1, 0.050, 0.050, 0.050, 0.050, 0.050)

	wantWarnings := []string{
		"level 1 (concurrency 1): 2 of 3 requests failed (66.7%): http_429 1, timeout 1",
		"level 1 (concurrency 1): the server sends 2.0 tokens per chunk",
		"level 1 (concurrency 1): client CPU at 93%",
	}
	for _, w := range wantWarnings {
		if !containsPrefix(r.Warnings, w) {
			t.Errorf("warnings %q lack %q", r.Warnings, w)
		}
	}
	// The data warnings are the ones about levels; the model adds its own (too few
	// levels, no plateau), tested with the model.
	var levelWarnings []string
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, "level ") {
			levelWarnings = append(levelWarnings, w)
		}
	}
	if len(levelWarnings) != len(wantWarnings) {
		t.Errorf("got %d level warnings, want %d: %q", len(levelWarnings), len(wantWarnings), levelWarnings)
	}

	if r.Timeline == nil || r.Timeline.Level != 0 || r.Timeline.Total != 4 || r.Timeline.Thinned || len(r.Timeline.Requests) != 4 {
		t.Fatalf("timeline = %+v, want level 0 with its 4 requests", r.Timeline)
	}
	tr := r.Timeline.Requests[1] // C, second by send time
	if tr.Worker != 1 || math.Abs(tr.Sent-0.010) > 1e-12 || tr.FirstToken == nil || math.Abs(*tr.FirstToken-0.110) > 1e-12 {
		t.Errorf("timeline request = %+v, want worker 1 sent 0.010 first 0.110", tr)
	}
	if string(r.Server) == "null" || !strings.Contains(string(r.Server), `"kv_capacity_tokens":8192`) {
		t.Errorf("server = %s", r.Server)
	}
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// TestDataWarnings exercises the token-count and client-lag rules.
func TestDataWarnings(t *testing.T) {
	var rows []trace.Row
	for i := range 20 {
		r := engineRow(0, 1, 0, int64(i), float64(i)*100, 10, gaps(4, 10000), 5) // 5 chunks
		switch i {
		case 3:
			r.OutputTokens = i32(7) // 5 chunks for 7 tokens on a one-token-per-chunk server: lost chunks
		case 4:
			r.OutputTokens = i32(4) // 5 chunks for 4 tokens: usage under-reports
		case 5:
			r.TokensSource = "chunks"
		}
		rows = append(rows, r)
	}
	for i := range 10 {
		// Open loop at 10/s: each request sent 20 ms after it was due.
		r := engineRow(1, 0, 0, int64(100+i), 5000+float64(i)*100+20, 10, gaps(4, 10000), 5)
		r.Rate = 10
		r.ScheduledNs = ms(5000 + float64(i)*100)
		rows = append(rows, r)
	}
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), rows)
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Runs[0]
	for _, w := range []string{
		"level 0 (concurrency 1): usage missing for 1 of 20 requests",
		"level 0 (concurrency 1): 1 requests received more token chunks than their usage tokens",
		"level 0 (concurrency 1): 1 requests received more than 2% fewer chunks than usage tokens",
		"level 1 (rate 10/s): the client sent late: send lag p99 20.0 ms",
	} {
		if !containsPrefix(r.Warnings, w) {
			t.Errorf("warnings %q lack %q", r.Warnings, w)
		}
	}
	// Open-loop window: first to last scheduled arrival, 5000 → 5900 ms.
	near(t, "rate window", r.Levels[1].WindowS, 0.9, 1e-12)
}
