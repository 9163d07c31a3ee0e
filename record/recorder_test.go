package record

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/parquet-go/parquet-go"
)

// readTrace reads a merged trace back: rows and run info.
func readTrace(t *testing.T, path string) ([]trace.Row, trace.RunInfo) {
	t.Helper()
	info, rows, err := trace.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return rows, info
}

// baseOptions is a small, fast recording against an engine.
func baseOptions(t *testing.T, url string) Options {
	return Options{
		URL:              url,
		Concurrency:      []int{1, 2},
		RequestsPerLevel: 4,
		PromptTokens:     60,
		OutputTokens:     8,
		Output:           filepath.Join(t.TempDir(), "run.parquet"),
		Seed:             1,
		Version:          "test",
		Timeout:          5 * time.Second,
		Grace:            2 * time.Second,
		ScrapeInterval:   50 * time.Millisecond,
	}
}

func ns(t time.Time) int64 { return t.UnixNano() }

// matchLog pairs each row with the engine's log entry of the same request, by the
// X-Request-Id header the recorder sends.
func matchLog(t *testing.T, rows []trace.Row, log []enginetest.RequestLog) map[int64]enginetest.RequestLog {
	t.Helper()
	byHeader := map[string]enginetest.RequestLog{}
	for _, e := range log {
		byHeader[e.RequestID] = e
	}
	out := map[int64]enginetest.RequestLog{}
	for _, r := range rows {
		e, ok := byHeader[RequestHeaderID(r.RunID, r.RequestID)]
		if !ok {
			t.Fatalf("row %d: the engine saw no request with X-Request-Id %s", r.RequestID, RequestHeaderID(r.RunID, r.RequestID))
		}
		out[r.RequestID] = e
	}
	return out
}

func TestRecordClosedLoopMatchesEngine(t *testing.T) {
	eng := enginetest.New(enginetest.Config{
		Model: "m1", TTFT: 30 * time.Millisecond, TokenGap: 3 * time.Millisecond,
		TokensPerChunk: 1, Kind: "vllm", RecordChunkTimes: true, KVTokens: 100000,
	})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 2, 4}
	o.Warmup = 2
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, fileInfo := readTrace(t, o.Output)
	if len(rows) != 3*(4+2) {
		t.Fatalf("%d rows, want 18", len(rows))
	}
	if fileInfo.RunID != info.RunID || len(fileInfo.Levels) != 3 || fileInfo.Target.Model != "m1" {
		t.Errorf("run info: %+v", fileInfo)
	}
	if fileInfo.Server.Kind != "vllm" || fileInfo.Server.KVCapacityTokens == nil || *fileInfo.Server.KVCapacityTokens < 100000 {
		t.Errorf("server info: %+v", fileInfo.Server)
	}
	if _, err := os.Stat(trace.PartsDir(o.Output)); !os.IsNotExist(err) {
		t.Errorf("parts directory left behind: %v", err)
	}
	if _, err := os.Stat(trace.MetricsPath(o.Output)); err != nil {
		t.Errorf("metrics sidecar: %v", err)
	}
	log := eng.Log()
	match := matchLog(t, rows, log)
	warm := map[int32]int{}
	ids := map[int64]bool{}
	const tol = int64(25 * time.Millisecond)
	for _, r := range rows {
		if ids[r.RequestID] {
			t.Errorf("duplicate request id %d", r.RequestID)
		}
		ids[r.RequestID] = true
		if r.Warmup {
			warm[r.Level]++
		}
		if r.Error != nil {
			t.Fatalf("row %d: error %q", r.RequestID, *r.Error)
		}
		e := match[r.RequestID]
		if r.OutputTokens == nil || int(*r.OutputTokens) != e.OutputTokens || e.OutputTokens != 8 || r.TokensSource != "usage" {
			t.Errorf("row %d: output tokens %v (%s), engine sent %d", r.RequestID, r.OutputTokens, r.TokensSource, e.OutputTokens)
		}
		if r.PromptTokens == nil || *r.PromptTokens != int32(e.PromptTokens) {
			t.Errorf("row %d: prompt tokens %v, engine counted %d", r.RequestID, r.PromptTokens, e.PromptTokens)
		}
		if p := *r.PromptTokens; math.Abs(float64(p-60)) > 3 {
			t.Errorf("row %d: prompt tokens %d, want 60±5%%", r.RequestID, p)
		}
		if r.TargetPromptTokens != 60 || r.MaxTokens != 8 || r.Status != 200 || r.FinishReason == nil || *r.FinishReason != "length" {
			t.Errorf("row %d: %+v", r.RequestID, r)
		}
		if d := ns(e.Received) - r.SentNs; d < -tol || d > tol {
			t.Errorf("row %d: sent %d ns away from the engine's receive", r.RequestID, d)
		}
		// Each chunk's recorded time follows the engine's send time closely.
		if len(e.ChunkTimes) != 8 || len(r.ChunkGapsUs) != 7 {
			t.Fatalf("row %d: %d engine chunks, %d gaps", r.RequestID, len(e.ChunkTimes), len(r.ChunkGapsUs))
		}
		at := *r.FirstTokenNs
		for i, sent := range e.ChunkTimes {
			if i > 0 {
				at += int64(r.ChunkGapsUs[i-1]) * 1000
			}
			if d := at - ns(sent); d < -int64(time.Millisecond) || d > tol {
				t.Errorf("row %d chunk %d: recorded %v after the engine sent it", r.RequestID, i, time.Duration(d))
			}
		}
		if r.FirstContentNs == nil || *r.FirstContentNs != *r.FirstTokenNs {
			t.Errorf("row %d: first content %v, first token %v", r.RequestID, r.FirstContentNs, r.FirstTokenNs)
		}
		// Gaps are whole microseconds: the sum loses under 1 µs per gap.
		if d := r.EndNs - at; d < 0 || d > int64(len(r.ChunkGapsUs))*1000 {
			t.Errorf("row %d: end %d is not the last chunk %d", r.RequestID, r.EndNs, at)
		}
		if r.ScheduledNs != r.SentNs {
			t.Errorf("row %d: closed loop scheduled_ns != sent_ns", r.RequestID)
		}
	}
	for l := int32(0); l < 3; l++ {
		if warm[l] != 2 {
			t.Errorf("level %d: %d warm-up rows, want 2", l, warm[l])
		}
	}
	for _, li := range fileInfo.Levels {
		if li.Requests != 4 || li.Errors != 0 || li.OutputTokS <= 0 || li.ClientCPUUtil <= 0 {
			t.Errorf("level info %+v", li)
		}
	}
}

func TestRecordSlotsQueueShowsInTTFT(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: 5 * time.Millisecond, TokenGap: 4 * time.Millisecond, Slots: 2, Kind: "llamacpp"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 4}
	o.RequestsPerLevel = 8
	o.OutputTokens = 10
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	ttft := map[int32][]float64{}
	for _, r := range rows {
		ttft[r.Concurrency] = append(ttft[r.Concurrency], float64(*r.FirstTokenNs-r.SentNs)/1e6)
	}
	p1, p4 := quantile(ttft[1], 0.5), quantile(ttft[4], 0.5)
	// Half the requests at c=4 wait a whole request (~40 ms) for a slot.
	if p4 < p1+15 {
		t.Errorf("p50 TTFT %.1f ms at c=1, %.1f ms at c=4: queueing for the 2 slots not visible", p1, p4)
	}
	if info.Server.Kind != "llamacpp" || info.Server.Slots == nil || *info.Server.Slots != 2 {
		t.Errorf("server info %+v", info.Server)
	}
	if !strings.Contains(info.Workload, "/tokenize") {
		t.Errorf("workload calibration %q, want /tokenize", info.Workload)
	}
}

func TestRecordOpenLoop(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = nil
	o.Rates = []float64{50, 100}
	o.RequestsPerLevel = 10
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	if len(rows) != 20 || info.Plan.Mode != "open" {
		t.Fatalf("%d rows, mode %s", len(rows), info.Plan.Mode)
	}
	distinct := map[int64]bool{}
	for _, r := range rows {
		if r.Rate == 0 || r.Concurrency != 0 {
			t.Errorf("row %+v", r)
		}
		if lag := r.SentNs - r.ScheduledNs; lag < 0 || lag > int64(100*time.Millisecond) {
			t.Errorf("send lag %v", time.Duration(lag))
		}
		distinct[r.ScheduledNs] = true
	}
	if len(distinct) != 20 {
		t.Errorf("scheduled times not distinct")
	}
	if info.Levels[0].SendLagP99S <= 0 {
		t.Errorf("send lag p99 not recorded: %+v", info.Levels[0])
	}
}

func TestRecordDataset(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	ds := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(ds, []byte(`{"prompt":"one two three"}
{"messages":[{"role":"user","content":"a b c d e"}],"max_tokens":3}
`), 0o644)
	o := baseOptions(t, eng.URL())
	o.Dataset, o.PromptTokens = ds, 0
	o.Concurrency = []int{1}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	for _, r := range rows {
		want := int32(8)
		if r.RequestID%2 == 1 {
			want = 3
		}
		if r.MaxTokens != want || *r.OutputTokens != want {
			t.Errorf("row %d: max_tokens %d output %d, want %d", r.RequestID, r.MaxTokens, *r.OutputTokens, want)
		}
	}
}

func TestRecordReasoningChunks(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 2 * time.Millisecond, ReasoningTokens: 3, ReasoningField: "reasoning"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	for _, r := range rows {
		if r.ReasoningTokens == nil || *r.ReasoningTokens != 3 || *r.FirstContentNs <= *r.FirstTokenNs {
			t.Errorf("row %d: reasoning %v first token %v first content %v", r.RequestID, r.ReasoningTokens, r.FirstTokenNs, r.FirstContentNs)
		}
	}
}

func TestRecordFaults(t *testing.T) {
	tests := []struct {
		fault   enginetest.Fault
		wantErr string // "" = the request succeeds
	}{
		{enginetest.FaultUnauthorized, "HTTP 401"},
		{enginetest.FaultModelNotFound, "HTTP 404"},
		{enginetest.FaultTooManyRequests, "HTTP 429"},
		{enginetest.FaultInternal, "HTTP 500"},
		{enginetest.FaultUnavailable, "HTTP 503"},
		{enginetest.FaultResetMidStream, "connection"},
		{enginetest.FaultMalformedChunk, "malformed chunk"},
		{enginetest.FaultStall, "timeout"},
		{enginetest.FaultErrorEvent, "server error"},
		{enginetest.FaultNoDone, ""},
		{enginetest.FaultCRLF, ""},
	}
	ds := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(ds, []byte("{\"prompt\":\"a b c d\"}\n"), 0o644)
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			t.Parallel()
			// Request 0 is the probe; every third sweep request gets the fault.
			eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond, APIKey: "sk-secret-123",
				Fault: func(i int64) enginetest.Fault {
					if i > 0 && i%3 == 0 {
						return tt.fault
					}
					return enginetest.FaultNone
				}})
			defer eng.Close()
			o := baseOptions(t, eng.URL())
			o.Dataset, o.PromptTokens = ds, 0
			o.Concurrency = []int{2}
			o.RequestsPerLevel = 9
			o.APIKey = "sk-secret-123"
			o.Timeout = 2 * time.Second // a stall fault ends in 2 s; a loaded machine never stalls a healthy stream that long
			if _, err := Record(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			rows, _ := readTrace(t, o.Output)
			if len(rows) != 9 {
				t.Fatalf("%d rows, want 9", len(rows))
			}
			faulted := 0
			for _, e := range eng.Log() {
				if e.Fault == tt.fault {
					faulted++
				}
			}
			errs := 0
			for _, r := range rows {
				if r.Error == nil {
					if r.OutputTokens == nil || *r.OutputTokens != 8 {
						t.Errorf("row %d: ok but output %v", r.RequestID, r.OutputTokens)
					}
					continue
				}
				errs++
				if !strings.Contains(*r.Error, tt.wantErr) || tt.wantErr == "" {
					t.Errorf("row %d: error %q, want %q", r.RequestID, *r.Error, tt.wantErr)
				}
				if strings.Contains(*r.Error, "sk-secret") {
					t.Errorf("row %d: error leaks the key: %q", r.RequestID, *r.Error)
				}
				if len(*r.Error) > client.MaxErrorBytes {
					t.Errorf("row %d: error of %d bytes", r.RequestID, len(*r.Error))
				}
			}
			want := faulted
			if tt.wantErr == "" {
				want = 0
			}
			if errs != want || faulted != 3 {
				t.Errorf("%d error rows, engine faulted %d requests", errs, faulted)
			}
		})
	}
}

func TestRecordPreflightErrors(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", APIKey: "sk-right-key"})
	defer eng.Close()
	nf := enginetest.New(enginetest.Config{Model: "m", Fault: func(i int64) enginetest.Fault { return enginetest.FaultModelNotFound }})
	defer nf.Close()
	dead := enginetest.New(enginetest.Config{})
	deadURL := dead.URL()
	dead.Close()

	tests := []struct {
		name    string
		edit    func(o *Options)
		want    string
		notWant string
	}{
		{"wrong key", func(o *Options) { o.URL, o.APIKey = eng.URL(), "sk-wrong-key" }, "refused the API key from $OPENAI_API_KEY", "sk-wrong-key"},
		{"no key", func(o *Options) { o.URL = eng.URL() }, "no API key was sent: if it wants one, set $OPENAI_API_KEY", ""},
		{"key env named", func(o *Options) { o.URL, o.APIKey, o.APIKeyEnv = eng.URL(), "sk-wrong-key", "MY_KEY" }, "$MY_KEY", "sk-wrong-key"},
		{"model not found", func(o *Options) { o.URL, o.Model = nf.URL(), "nope" }, "model not found", ""},
		{"unreachable", func(o *Options) { o.URL = deadURL }, "cannot reach the server", ""},
		{"unwritable output", func(o *Options) { o.URL, o.Output = eng.URL(), "/nonexistent-dir/x/run.parquet" }, "cannot write", ""},
		{"credentials in url", func(o *Options) { o.URL = strings.Replace(deadURL, "http://", "http://bob:hunter2@", 1) }, "cannot reach", "hunter2"},
		{"bad dataset", func(o *Options) {
			ds := filepath.Join(t.TempDir(), "bad.jsonl")
			os.WriteFile(ds, []byte("{\"prompt\":\"ok\"}\nnot json\n"), 0o644)
			o.URL, o.Dataset, o.APIKey = eng.URL(), ds, "sk-right-key"
		}, "line 2", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := baseOptions(t, "")
			tt.edit(&o)
			_, err := Record(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error leaks %q: %v", tt.notWant, err)
			}
			if _, serr := os.Stat(trace.PartsDir(o.Output)); serr == nil {
				t.Errorf("parts directory left behind after a pre-flight error")
			}
		})
	}
}

func TestRecordServerKilledMidLevel(t *testing.T) {
	var n atomic.Int64
	var eng *enginetest.Server
	eng = enginetest.New(enginetest.Config{Model: "m", TokenGap: 2 * time.Millisecond,
		Fault: func(i int64) enginetest.Fault {
			if n.Add(1) == 15 {
				go eng.Kill()
			}
			return enginetest.FaultNone
		}})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2, 4}
	o.RequestsPerLevel = 1000
	info, err := Record(context.Background(), o)
	if !errors.Is(err, ErrServerGone) {
		t.Fatalf("err %v, want ErrServerGone", err)
	}
	rows, fileInfo := readTrace(t, o.Output)
	ok := 0
	for _, r := range rows {
		if r.Error == nil {
			ok++
		}
	}
	if ok < 5 || len(rows) >= 1000 || !strings.Contains(fileInfo.StopReason, "stopped answering") {
		t.Errorf("%d rows (%d ok), stop reason %q / %q", len(rows), ok, fileInfo.StopReason, info.StopReason)
	}
}

func TestRecordInterrupt(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 50 * time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2}
	o.RequestsPerLevel = 100
	o.OutputTokens = 200 // 10 s per request: the grace period runs out
	o.Grace = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	start := time.Now()
	info, err := Record(ctx, o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop", d)
	}
	rows, fileInfo := readTrace(t, o.Output)
	if len(rows) != 2 || !fileInfo.Interrupted || !info.Interrupted {
		t.Fatalf("%d rows, interrupted %v", len(rows), fileInfo.Interrupted)
	}
	for _, r := range rows {
		if r.Error == nil || *r.Error != "cancelled" || r.FirstTokenNs == nil {
			t.Errorf("row %+v", r)
		}
	}
}

func TestRecordResume(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{1, 2, 4}
	o.crashAfterLevels = 2
	first, err := Record(context.Background(), o)
	if !errors.Is(err, errSimulatedCrash) {
		t.Fatalf("err %v", err)
	}
	// What a kill in the middle of level 2 leaves: a sealed part of the level
	// (its run info does not list it as done) and a half-written file.
	ps, _, err := trace.ResumeParts(trace.PartsDir(o.Output))
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.SealRows(2, []trace.Row{{RunID: first.RunID, Level: 2, RequestID: 999}}, first); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(trace.PartsDir(o.Output), "000101-rows-L0002.parquet.inprogress"), []byte("junk"), 0o644)

	// A different plan is refused.
	bad := o
	bad.crashAfterLevels, bad.Resume, bad.OutputTokens = 0, true, 9
	if _, err := Record(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "plan differs") {
		t.Fatalf("resume with another plan: %v", err)
	}

	o.crashAfterLevels, o.Resume = 0, true
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, fileInfo := readTrace(t, o.Output)
	if len(rows) != 12 || len(fileInfo.Levels) != 3 || fileInfo.RunID != first.RunID || len(info.Resumed) != 1 {
		t.Fatalf("%d rows, %d levels, run id %s vs %s", len(rows), len(fileInfo.Levels), fileInfo.RunID, first.RunID)
	}
	ids := map[int64]bool{}
	for _, r := range rows {
		if ids[r.RequestID] || r.RequestID == 999 {
			t.Errorf("request id %d duplicated or from the dropped part", r.RequestID)
		}
		ids[r.RequestID] = true
	}
	if _, err := os.Stat(trace.PartsDir(o.Output)); !os.IsNotExist(err) {
		t.Errorf("parts left: %v", err)
	}
}

func TestRecordToStdout(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	var buf strings.Builder
	o.Output, o.Stdout = "-", &buf
	o.Concurrency = []int{1}
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(buf.String()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 4 {
		t.Errorf("%d rows on stdout", f.NumRows())
	}
}

// TestRecordInterruptProgressRace: the interrupt watcher and the level's live ticker
// write to one progress writer that is not safe for concurrent use, and the caller
// reads it as soon as Record returns (the CLI tests do). Under -race this failed while
// the watcher wrote unlocked and outlived the sweep.
func TestRecordInterruptProgressRace(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TokenGap: 20 * time.Millisecond})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2}
	o.RequestsPerLevel = 100
	o.OutputTokens = 200
	o.Grace = 300 * time.Millisecond
	var progress bytes.Buffer
	o.Progress = &progress
	o.Live = true // a line every 250 ms, beside the watcher's
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(600*time.Millisecond, cancel)
	if _, err := Record(ctx, o); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if out := progress.String(); !strings.Contains(out, "interrupted: waiting") {
		t.Errorf("progress lacks the interrupt line:\n%s", out)
	}
}
