package analyze

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// slotServer is a closed-loop server with a fixed number of batch slots: each
// worker's request streams tokens, one per chunk, with gaps stretched by how many
// workers share each slot, so throughput rises with concurrency up to slots and is
// flat beyond it: the knee lies at slots.
type slotServer struct {
	slots, perWorker, tokens int
}

// rows of one level (index level, c workers), starting at t0 ns.
func (s slotServer) rows(level, c int, t0 int64, id *int64) ([]trace.Row, int64) {
	gapUs := int32(5000 * max(1, float64(c)/float64(s.slots)))
	var rows []trace.Row
	last := t0
	for w := range c {
		now := t0 + int64(w)*int64(time.Millisecond)/int64(c)
		for range s.perWorker {
			sent := now
			first := sent + int64(20*time.Millisecond)
			gaps := make([]int32, s.tokens-1)
			for k := range gaps {
				gaps[k] = gapUs
			}
			end := first + int64(len(gaps))*int64(gapUs)*1000
			now = end
			*id++
			out, prompt := int32(s.tokens), int32(100)
			fin := "length"
			ft := first
			rows = append(rows, trace.Row{
				RunID: "rep", Level: int32(level), Concurrency: int32(c), RequestID: *id, Worker: int32(w),
				ScheduledNs: sent, SentNs: sent, FirstTokenNs: &ft, FirstContentNs: &ft, EndNs: end,
				ChunkGapsUs: gaps, PromptTokens: &prompt, OutputTokens: &out, TokensSource: "usage",
				TargetPromptTokens: prompt, MaxTokens: out, Status: 200, FinishReason: &fin,
			})
		}
		last = max(last, now)
	}
	return rows, last
}

// repeatTrace records conc twice in order (as record --repeat 2 does), the first
// repeat against a server of slots[0] slots, the second of slots[1].
func repeatTrace(t *testing.T, conc []int, slots [2]int) string {
	t.Helper()
	info := trace.RunInfo{
		Tool: "ceiling", Version: "test", RunID: "rep", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Target: trace.Target{BaseURL: "http://127.0.0.1:1", Endpoint: "chat", Model: "tiny"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: conc, Repeat: 2},
		Server: trace.ServerInfo{Kind: "unknown"},
	}
	var rows []trace.Row
	var id int64
	at := info.Started.UnixNano()
	for p, c := range conc {
		for rep := range 2 {
			level := 2*p + rep
			lr, end := slotServer{slots: slots[rep], perWorker: 12, tokens: 20}.rows(level, c, at, &id)
			rows = append(rows, lr...)
			info.Levels = append(info.Levels, trace.LevelInfo{Level: level, Concurrency: c, Repeat: rep})
			at = end + int64(time.Second)
		}
	}
	return writeTrace(t, t.TempDir(), "run.parquet", info, rows)
}

func TestRepeatsPooled(t *testing.T) {
	// Up to 64: past 8 slots this server's throughput still creeps (9% from 8 to
	// 16, 5% to 32), so one repeat alone needs three levels past the knee for its
	// plateau to be significantly flat (kneerule).
	conc := []int{1, 2, 4, 8, 16, 32, 64}
	tests := []struct {
		name     string
		slots    [2]int
		moves    bool
		low, top float64 // the range across repeats when it moves
	}{
		{"repeats agree", [2]int{8, 8}, false, 8, 8},
		// The 16-slot repeat's throughput creeps past 16 (the client's turnaround),
		// too little data past its knee to call it flat: that repeat names none,
		// and with repeats this far apart the pooled curve has no knee either.
		{"knee moves", [2]int{4, 16}, true, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := repeatTrace(t, conc, tt.slots)
			a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1, Resamples: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := a.Runs[0]
			if len(r.Levels) != 2*len(conc) {
				t.Fatalf("%d levels, want every repeat a level: %d", len(r.Levels), 2*len(conc))
			}
			for i, l := range r.Levels {
				if l.Level != i || l.Repeat != i%2 || l.Concurrency != conc[i/2] {
					t.Errorf("level %d: {level %d, repeat %d, c=%d}", i, l.Level, l.Repeat, l.Concurrency)
				}
				if !l.Valid {
					t.Fatalf("level %d invalid: %s", i, l.InvalidReason)
				}
			}
			// Six points, not twelve levels, for the warnings and fits.
			for _, w := range r.Warnings {
				if strings.Contains(w, "only ") && strings.Contains(w, " levels") {
					t.Errorf("warning counts levels, not points: %s", w)
				}
			}
			if len(r.Repeats) != len(conc) {
				t.Fatalf("%d repeat spreads, want %d", len(r.Repeats), len(conc))
			}
			for i, s := range r.Repeats {
				a, b := r.Levels[2*i], r.Levels[2*i+1]
				if s.Concurrency != conc[i] || len(s.Levels) != 2 || s.Levels[0] != a.Level || s.Levels[1] != b.Level {
					t.Errorf("spread %d: %+v", i, s)
				}
				if s.OutputTokSMin != min(a.OutputTokS, b.OutputTokS) || s.OutputTokSMax != max(a.OutputTokS, b.OutputTokS) {
					t.Errorf("c=%d: out tok/s %g–%g, levels %g and %g", s.Concurrency, s.OutputTokSMin, s.OutputTokSMax, a.OutputTokS, b.OutputTokS)
				}
				if s.TTFTP99Min == nil || *s.TTFTP99Min != min(*a.TTFT.P99, *b.TTFT.P99) || *s.TTFTP99Max != max(*a.TTFT.P99, *b.TTFT.P99) {
					t.Errorf("c=%d: TTFT p99 spread %v–%v", s.Concurrency, s.TTFTP99Min, s.TTFTP99Max)
				}
			}
			st := r.RepeatCeiling
			if st == nil || (!tt.moves && r.Ceiling.Concurrency == nil) {
				t.Fatalf("repeat ceiling %+v, ceiling %+v", st, r.Ceiling)
			}
			warned := false
			for _, w := range r.Warnings {
				warned = warned || strings.Contains(w, "moves between repeats")
			}
			if warned != tt.moves || st.Stable == tt.moves {
				t.Errorf("stable %v, warned %v; want the ceiling to move: %v (%s; warnings %q)", st.Stable, warned, tt.moves, st.Text, r.Warnings)
			}
			if st.Low == nil || *st.Low != tt.low || *st.High != tt.top {
				t.Errorf("range %s, want %g–%g (%s)", st.RangeText(), tt.low, tt.top, st.Text)
			}
			if !tt.moves && *r.Ceiling.Concurrency != 8 {
				t.Errorf("pooled ceiling %g, want the knee at 8", *r.Ceiling.Concurrency)
			}

			js, _ := json.Marshal(a)
			if !strings.Contains(string(js), `"repeats":[{"concurrency":1,"rate":0,"levels":[0,1]`) {
				t.Errorf("JSON lacks runs[].repeats: %.400s", js)
			}
		})
	}
}

func TestPoolRepeats(t *testing.T) {
	lv := func(idx, rep, c int, tok, dec float64, ttft *float64) Level {
		return Level{Level: idx, Repeat: rep, Concurrency: c, OutputTokS: tok, DecodeConcurrency: dec, TTFT: Summary{P99: ttft}, Requests: 10, Errors: 1}
	}
	tests := []struct {
		name   string
		levels []Level
		want   []Level // the fields compared: level, concurrency, tok/s, decode, TTFT p99, requests
	}{
		{"no repeats: unchanged", []Level{lv(0, 0, 1, 10, 1, fp(0.1)), lv(1, 0, 2, 20, 2, fp(0.2))},
			[]Level{lv(0, 0, 1, 10, 1, fp(0.1)), lv(1, 0, 2, 20, 2, fp(0.2))}},
		{"two repeats: mean and median", []Level{lv(0, 0, 4, 10, 3, fp(0.1)), lv(1, 1, 4, 30, 5, fp(0.3)), lv(2, 0, 8, 40, 6, nil)},
			[]Level{{Level: 0, Concurrency: 4, OutputTokS: 20, DecodeConcurrency: 4, TTFT: Summary{P99: fp(0.2)}, Requests: 20, Errors: 2}, lv(2, 0, 8, 40, 6, nil)}},
		{"three repeats: median, not mean", []Level{lv(0, 0, 4, 10, 3, fp(0.1)), lv(1, 1, 4, 20, 3, fp(0.2)), lv(2, 2, 4, 30, 3, fp(0.9))},
			[]Level{{Level: 0, Concurrency: 4, OutputTokS: 20, DecodeConcurrency: 3, TTFT: Summary{P99: fp(0.2)}, Requests: 30, Errors: 3}}},
		// Same concurrency but not marked as repeats (an imported sweep over prompt
		// lengths at c=16): separate points, never averaged together.
		{"same concurrency, no repeat marks", []Level{lv(0, 0, 16, 10, 3, fp(0.1)), lv(1, 0, 16, 30, 5, fp(0.3))},
			[]Level{lv(0, 0, 16, 10, 3, fp(0.1)), lv(1, 0, 16, 30, 5, fp(0.3))}},
		{"a repeat without TTFT", []Level{lv(0, 0, 4, 10, 3, nil), lv(1, 1, 4, 10, 3, fp(0.4))},
			[]Level{{Level: 0, Concurrency: 4, OutputTokS: 10, DecodeConcurrency: 3, TTFT: Summary{P99: fp(0.4)}, Requests: 20, Errors: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := poolRepeats(tt.levels)
			if len(got) != len(tt.want) {
				t.Fatalf("%d pooled levels, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				same := g.Level == w.Level && g.Concurrency == w.Concurrency && g.OutputTokS == w.OutputTokS &&
					g.DecodeConcurrency == w.DecodeConcurrency && g.Requests == w.Requests && g.Errors == w.Errors &&
					(g.TTFT.P99 == nil) == (w.TTFT.P99 == nil) && (g.TTFT.P99 == nil || relClose(*g.TTFT.P99, *w.TTFT.P99, 1e-12))
				if !same {
					t.Errorf("point %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
