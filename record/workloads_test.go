package record

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
	"github.com/ceiling-llm/ceiling/trace"
)

// ksDistance is the Kolmogorov–Smirnov statistic of whole-token samples against a
// length distribution (each draw x stands for the continuous values x±0.5).
func ksDistance(samples []float64, l workload.Lengths) float64 {
	s := slices.Clone(samples)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		d = math.Max(d, math.Max(math.Abs(float64(j)/n-l.CDF(s[i]+0.5)), math.Abs(float64(i)/n-l.CDF(s[i]-0.5))))
		i = j
	}
	return d
}

// checkFit fails the test when samples do not fit spec (KS test at the 1% level)
// or when they also fit a distribution a quarter off (the test would be blind).
func checkFit(t *testing.T, what string, samples []float64, spec string) {
	t.Helper()
	l, err := workload.ParseLengths(spec)
	if err != nil {
		t.Fatal(err)
	}
	crit := 1.63 / math.Sqrt(float64(len(samples)))
	d := ksDistance(samples, l)
	off := l
	off.A *= 1.25
	if off.Kind == "uniform" {
		off.B *= 1.25
	}
	doff := ksDistance(samples, off)
	t.Logf("%s: %d samples, KS distance %.3f to %s (critical %.3f), %.3f to %s", what, len(samples), d, spec, crit, doff, off)
	if d > crit {
		t.Errorf("%s do not fit %s: KS distance %.3f above the 1%% critical value %.3f", what, spec, d, crit)
	}
	if doff <= crit {
		t.Errorf("%s fit %s as well as %s: the check cannot fail", what, off, spec)
	}
}

// TestLengthDistributionsRecorded records a lognormal prompt and a uniform output
// distribution against the test engine (whose tokens are words) and checks the
// recorded prompt_tokens, target_prompt_tokens, max_tokens and output_tokens.
func TestLengthDistributionsRecorded(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", MaxModelLen: 8192})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{16}
	o.RequestsPerLevel = 500
	o.PromptLengths = "lognormal:200,0.5"
	o.OutputLengths = "uniform:4-40"
	o.IgnoreEOS = true
	o.Seed = 3
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, fi := readTrace(t, o.Output)
	var prompt, target, maxTok, output []float64
	for _, r := range rows {
		if r.Error != nil {
			t.Fatalf("request %d: %s", r.RequestID, *r.Error)
		}
		prompt = append(prompt, float64(*r.PromptTokens))
		target = append(target, float64(r.TargetPromptTokens))
		maxTok = append(maxTok, float64(r.MaxTokens))
		output = append(output, float64(*r.OutputTokens))
		if d := math.Abs(float64(*r.PromptTokens - r.TargetPromptTokens)); d > 2 {
			t.Errorf("request %d: %d prompt tokens for a target of %d", r.RequestID, *r.PromptTokens, r.TargetPromptTokens)
		}
	}
	checkFit(t, "target prompt lengths", target, o.PromptLengths)
	checkFit(t, "recorded prompt_tokens", prompt, o.PromptLengths)
	checkFit(t, "max_tokens", maxTok, o.OutputLengths)
	checkFit(t, "recorded output_tokens", output, o.OutputLengths)
	if fi.Plan.PromptLengths != "lognormal:200,0.5" || fi.Plan.OutputLengths != "uniform:4-40" {
		t.Errorf("plan: %+v", fi.Plan)
	}
	if !strings.Contains(info.OutputControl, "min_tokens") || !strings.Contains(info.OutputControl, "ignore_eos") {
		t.Errorf("output control %q: want ignore_eos and min_tokens on a vLLM server", info.OutputControl)
	}
	// The same seed draws the same lengths.
	o2 := o
	o2.Output = filepath.Join(t.TempDir(), "again.parquet")
	if _, err := Record(context.Background(), o2); err != nil {
		t.Fatal(err)
	}
	rows2, _ := readTrace(t, o2.Output)
	want := map[int64][2]int32{}
	for _, r := range rows {
		want[r.RequestID] = [2]int32{r.TargetPromptTokens, r.MaxTokens}
	}
	for _, r := range rows2 {
		if want[r.RequestID] != [2]int32{r.TargetPromptTokens, r.MaxTokens} {
			t.Fatalf("request %d: lengths %d/%d, the first run drew %v", r.RequestID, r.TargetPromptTokens, r.MaxTokens, want[r.RequestID])
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDatasetsSwept sweeps a ShareGPT JSON file and a messages JSONL: every request
// is a dataset prompt, its max_tokens the length of the dataset's answer.
func TestDatasetsSwept(t *testing.T) {
	var sharegpt, messages strings.Builder
	sharegpt.WriteString("[\n")
	type want struct{ prompt, answer int }
	var wants []want
	for i := range 12 {
		q := strings.Repeat("why ", 5+i)
		a := strings.Repeat("because ", 3+2*i)
		if i > 0 {
			sharegpt.WriteString(",\n")
		}
		fmt.Fprintf(&sharegpt, `{"id": "c%d", "conversations": [{"from": "human", "value": %q}, {"from": "gpt", "value": %q}]}`, i, q, a)
		fmt.Fprintf(&messages, `{"messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": %q}, {"role": "assistant", "content": %q}]}`+"\n", q, a)
		wants = append(wants, want{5 + i, 3 + 2*i})
	}
	sharegpt.WriteString("\n]\n")
	for _, tc := range []struct {
		name, file, content string
		systemTokens        int
	}{
		{"sharegpt", "sg.json", sharegpt.String(), 0},
		{"messages", "msgs.jsonl", messages.String(), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", MaxModelLen: 4096})
			defer eng.Close()
			o := baseOptions(t, eng.URL())
			o.PromptTokens = 0
			o.Dataset = writeFile(t, tc.file, tc.content)
			o.Concurrency = []int{1, 3}
			o.RequestsPerLevel = 12
			info, err := Record(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := readTrace(t, o.Output)
			if len(rows) != 24 {
				t.Fatalf("%d rows, want 24", len(rows))
			}
			for _, r := range rows {
				w := wants[int(r.RequestID)%12]
				if r.Error != nil || *r.PromptTokens != int32(w.prompt+tc.systemTokens) || r.MaxTokens != int32(w.answer) || *r.OutputTokens != int32(w.answer) {
					t.Errorf("request %d: prompt %v, max_tokens %d, output %v, error %v; want prompt %d, answer %d",
						r.RequestID, *r.PromptTokens, r.MaxTokens, r.OutputTokens, r.Error, w.prompt+tc.systemTokens, w.answer)
				}
				if r.TargetPromptTokens != *r.PromptTokens {
					t.Errorf("request %d: target %d, prompt %d", r.RequestID, r.TargetPromptTokens, *r.PromptTokens)
				}
			}
			if !strings.Contains(info.Workload, tc.name) {
				t.Errorf("workload %q does not name the format %s", info.Workload, tc.name)
			}
		})
	}
}

// interArrivalCV is the coefficient of variation of a level's scheduled
// inter-arrival times.
func interArrivalCV(rows []trace.Row) float64 {
	var ts []int64
	for _, r := range rows {
		ts = append(ts, r.ScheduledNs)
	}
	slices.Sort(ts)
	var sum, sq float64
	n := float64(len(ts) - 1)
	for i := 1; i < len(ts); i++ {
		d := float64(ts[i] - ts[i-1])
		sum += d
		sq += d * d
	}
	mean := sum / n
	return math.Sqrt(sq/n-mean*mean) / mean
}

// TestBurstinessRaisesArrivalCV records --rate 200 with gamma shape 0.25 and 1: the
// gamma arrivals' CV is 1/√shape = 2, Poisson's 1.
func TestBurstinessRaisesArrivalCV(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", TTFT: time.Millisecond})
	defer eng.Close()
	cv := map[float64]float64{}
	for _, b := range []float64{0.25, 1} {
		o := baseOptions(t, eng.URL())
		o.Concurrency = nil
		o.Rates = []float64{200}
		o.RequestsPerLevel = 600
		o.Burstiness = b
		o.Output = filepath.Join(t.TempDir(), fmt.Sprintf("b%v.parquet", b))
		if _, err := Record(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rows, fi := readTrace(t, o.Output)
		cv[b] = interArrivalCV(rows)
		if b != 1 && fi.Plan.Burstiness != b {
			t.Errorf("plan burstiness %v, want %v", fi.Plan.Burstiness, b)
		}
		// The sends follow the schedule (the CV is of what was sent, not only asked).
		var lags []float64
		for _, r := range rows {
			lags = append(lags, float64(r.SentNs-r.ScheduledNs)/1e6)
		}
		slices.Sort(lags)
		t.Logf("burstiness %v: inter-arrival CV %.2f, send lag p95 %.1f ms", b, cv[b], lags[len(lags)*95/100])
	}
	if cv[1] < 0.85 || cv[1] > 1.15 {
		t.Errorf("Poisson inter-arrival CV %.2f, want about 1", cv[1])
	}
	if cv[0.25] < 1.6 || cv[0.25] < 1.4*cv[1] {
		t.Errorf("burstiness 0.25: CV %.2f, want about 2 and clearly above Poisson's %.2f", cv[0.25], cv[1])
	}
}

// TestReplaySendsAtTimestamps replays a trace at speeds 1 and 4: each request is
// scheduled at its timestamp / speed after the level's start, sent within 15 ms of
// it (the stated tolerance), with the trace's lengths.
func TestReplaySendsAtTimestamps(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TTFT: 2 * time.Millisecond})
	defer eng.Close()
	var b strings.Builder
	var stamps []float64
	for i := range 40 {
		ts := math.Round(1e4*(0.5+1.2*math.Pow(float64(i)/40, 2))) / 1e4 // uneven gaps, not from 0
		stamps = append(stamps, ts)
		fmt.Fprintf(&b, `{"timestamp": %.4f, "prompt_tokens": %d, "output_tokens": %d}`+"\n", ts, 20+i, 2+i%5)
	}
	fmt.Fprintf(&b, `{"timestamp_ms": %.1f, "prompt": "a literal prompt of seven short words", "output_tokens": 3}`+"\n", 1000*stamps[39]+10)
	stamps = append(stamps, stamps[39]+0.010)
	o := baseOptions(t, eng.URL())
	o.Concurrency = nil
	o.RequestsPerLevel = 0
	o.Replay = writeFile(t, "trace.jsonl", b.String())
	o.ReplaySpeeds = []float64{1, 4}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rows, fi := readTrace(t, o.Output)
	if len(rows) != 82 || fi.Plan.Mode != "replay" || len(info.Levels) != 2 {
		t.Fatalf("%d rows, mode %s, %d levels; want 82, replay, 2", len(rows), fi.Plan.Mode, len(info.Levels))
	}
	const tolerance, worstTolerance = 15 * time.Millisecond, 50 * time.Millisecond
	for lvl, speed := range []float64{1, 4} {
		var lr []trace.Row
		for _, r := range rows {
			if r.Level == int32(lvl) {
				lr = append(lr, r)
			}
		}
		slices.SortFunc(lr, func(a, b trace.Row) int { return int(a.RequestID - b.RequestID) })
		start := lr[0].ScheduledNs
		var worst time.Duration
		var lags []float64
		for i, r := range lr {
			lags = append(lags, float64(r.SentNs-r.ScheduledNs)/1e6)
			wantOff := (stamps[i] - stamps[0]) / speed
			if got := float64(r.ScheduledNs-start) / 1e9; math.Abs(got-wantOff) > 1e-6 {
				t.Errorf("speed %v request %d: scheduled %.6f s after the first, want %.6f", speed, i, got, wantOff)
			}
			worst = max(worst, time.Duration(r.SentNs-r.ScheduledNs))
			wantPrompt, wantOut := int32(20+i), int32(2+i%5)
			if i == 40 {
				wantPrompt, wantOut = 7, 3
			}
			if r.Error != nil || *r.OutputTokens != wantOut || (i < 40 && math.Abs(float64(*r.PromptTokens-wantPrompt)) > 1) || (i == 40 && *r.PromptTokens != 7) {
				t.Errorf("speed %v request %d: prompt %v, output %v (error %v); want %d, %d", speed, i, *r.PromptTokens, *r.OutputTokens, r.Error, wantPrompt, wantOut)
			}
		}
		slices.Sort(lags)
		t.Logf("speed %v: send lag p50 %.2f ms, p90 %.2f ms, worst %v (tolerance %v), level rate %.1f/s", speed, lags[len(lags)/2], lags[len(lags)*9/10], worst, tolerance, info.Levels[lvl].Rate)
		// Nine in ten requests leave within the tolerance; the worst one may be held
		// up by the race detector or a busy machine up to worstTolerance, but a
		// pacer that drifts or waits for the previous answer fails either bound.
		if p90 := time.Duration(lags[len(lags)*9/10] * float64(time.Millisecond)); p90 > tolerance {
			t.Errorf("speed %v: p90 send lag %v, above the %v tolerance", speed, p90, tolerance)
		}
		if worst > worstTolerance {
			t.Errorf("speed %v: a request was sent %v after its timestamp, above the %v bound", speed, worst, worstTolerance)
		}
	}
}

// TestConversationsResendHistory runs 3-turn conversations on the test engine:
// rows carry their conversation and turn, and each turn's prompt is the previous
// prompt plus its answer plus the new message.
func TestConversationsResendHistory(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2}
	o.RequestsPerLevel = 18
	o.Turns = 3
	o.PromptTokens = 30
	o.OutputTokens = 10
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, fi := readTrace(t, o.Output)
	if fi.Plan.Turns != 3 || len(rows) != 18 {
		t.Fatalf("plan turns %d, %d rows", fi.Plan.Turns, len(rows))
	}
	convs := map[int64][]trace.Row{}
	for _, r := range rows {
		if r.ConversationID == nil || r.Turn == nil || r.Error != nil {
			t.Fatalf("request %d: conversation %v turn %v error %v", r.RequestID, r.ConversationID, r.Turn, r.Error)
		}
		convs[*r.ConversationID] = append(convs[*r.ConversationID], r)
	}
	// 18 requests on 2 workers: 6 conversations of 3 turns, or up to 2 of them cut
	// short by the level's end (a worker took the level's last request mid-way).
	if len(convs) < 6 || len(convs) > 8 {
		t.Errorf("%d conversations, want 6 to 8", len(convs))
	}
	for id, cr := range convs {
		slices.SortFunc(cr, func(a, b trace.Row) int { return int(*a.Turn - *b.Turn) })
		for i, r := range cr {
			if int(*r.Turn) != i+1 || (i == 0 && r.RequestID != id) {
				t.Fatalf("conversation %d: turns %v", id, cr)
			}
			if i == 0 {
				continue
			}
			prev := cr[i-1]
			grow := *r.PromptTokens - *prev.PromptTokens - *prev.OutputTokens
			if grow < 25 || grow > 35 {
				t.Errorf("conversation %d turn %d: prompt %d after %d+%d: grew by %d, want the new message's ~30",
					id, i+1, *r.PromptTokens, *prev.PromptTokens, *prev.OutputTokens, grow)
			}
			if d := r.TargetPromptTokens - *r.PromptTokens; d < -5 || d > 5 {
				t.Errorf("conversation %d turn %d: target %d, prompt %d", id, i+1, r.TargetPromptTokens, *r.PromptTokens)
			}
		}
	}
}

// TestWorkloadUsageErrors checks that bad workload flags are usage errors naming the
// flag and the syntax.
func TestWorkloadUsageErrors(t *testing.T) {
	base := Options{URL: "http://x", Concurrency: []int{1}, Output: "x.parquet"}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"prompt syntax", func(o *Options) { o.PromptLengths = "normal:5" }, "Options.PromptTokens \"normal:5\""},
		{"output syntax", func(o *Options) { o.OutputLengths = "poisson:3" }, "Options.OutputTokens \"poisson:3\": unknown distribution"},
		{"dataset length without dataset", func(o *Options) { o.OutputLengths = "dataset" }, "needs Options.Dataset"},
		{"filter syntax", func(o *Options) { o.Dataset = "d"; o.DatasetFilter = "min=3" }, "Options.DatasetFilter"},
		{"burstiness closed", func(o *Options) { o.Burstiness = 0.5 }, "Options.Burstiness shapes open-loop arrivals"},
		{"burstiness negative", func(o *Options) { o.Rates, o.Concurrency = []float64{1}, nil; o.Burstiness = -1 }, "Options.Burstiness -1"},
		{"turns completions", func(o *Options) { o.Turns = 3; o.Endpoint = "completions" }, "Options.Turns needs Options.Endpoint chat"},
		{"turns open", func(o *Options) { o.Turns = 3; o.Rates, o.Concurrency = []float64{1}, nil }, "closed-loop"},
		{"replay and rate", func(o *Options) { o.Replay = "t"; o.Rates, o.Concurrency = []float64{1}, nil }, "Options.Replay sends"},
		{"replay speed", func(o *Options) { o.Replay, o.Concurrency = "t", nil; o.ReplaySpeeds = []float64{0} }, "Options.ReplaySpeeds 0"},
		{"prefixes without length", func(o *Options) { o.Prefixes = 3 }, "Options.Prefixes needs Options.SharedPrefixTokens"},
		{"prefix mix", func(o *Options) { o.Prefixes, o.SharedPrefixTokens, o.PrefixMix = 2, 10, []float64{1} }, "Options.PrefixMix has 1 weights for 2"},
	}
	for _, tt := range tests {
		o := base
		tt.edit(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}
