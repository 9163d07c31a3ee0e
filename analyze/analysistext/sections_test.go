package analysistext

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// text is a's text output.
func text(t *testing.T, a *analyze.Analysis) string {
	t.Helper()
	var b strings.Builder
	if err := Write(&b, a, FormatText); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestEnergyLine(t *testing.T) {
	e := &analyze.LevelEnergy{PowerPerGPUW: pf(612.4), JPerOutputToken: pf(0.4172), JPerRequest: pf(53.41), EnergyCostPerMOutput: pf(0.01391), EnergyShare: pf(0.0055), PUE: 1.2}
	want := "GPU power there: 612 W per GPU, 0.417 J per output token, 53.4 J per request; energy $0.0139 per million output tokens at PUE 1.20 (1% of GPU-hours + energy)"
	if got := energyLine(e); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestNoCompletionsIntervalRow: a level where every request failed shows "—" in
// the interval table, never 0.0–0.0 nor "too short" (analyze's
// TestNoCompletionsHasNoInterval: no interval in the data).
func TestNoCompletionsIntervalRow(t *testing.T) {
	iv := &analyze.Interval{Low: 40, High: 60}
	a := &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{RunID: "r",
		Bootstrap: &analyze.Bootstrap{Confidence: 0.95, Resamples: 200},
		Levels: []analyze.Level{
			{Level: 0, Concurrency: 2, Requests: 40, Valid: true, OutputTokS: 50, CI: &analyze.LevelCI{OutputTokS: iv, RequestS: iv, Blocks: 8}},
			{Level: 1, Concurrency: 1, Requests: 2, Errors: 2, CI: &analyze.LevelCI{Blocks: 0}},
		}}}}
	out := text(t, a)
	_, after, ok := strings.Cut(out, "Confidence intervals")
	if !ok {
		t.Fatalf("no interval table:\n%s", out)
	}
	table, _, _ := strings.Cut(after, "too short:")
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "1" {
			if strings.Contains(line, "0.0–0.0") || strings.Contains(line, "too short") || f[2] != "—" {
				t.Errorf("level 1's intervals: %q; want —", line)
			}
			return
		}
	}
	t.Errorf("level 1 missing from the interval table:\n%s", table)
}

// TestNoPeakInText: a fit without a peak within reach prints its words, never the
// absurd peak (analyze's TestNoPeakInJSON: in the JSON).
func TestNoPeakInText(t *testing.T) {
	sigma, kappa := 0.02, 6.2e-17
	raw := math.Sqrt((1 - sigma) / kappa) // the USL's Nmax
	why := "no peak within the model's reach (κ ≈ 0: the fit's peak lies beyond 10× the highest level tested, 80)"
	a := &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{Fit: analyze.Fit{USL: &analyze.USLFit{Sigma: sigma, Kappa: kappa, Lambda: 100, NoPeak: why, R2: 0.99}}}}}
	s := text(t, a)
	if !strings.Contains(s, "Nmax = "+why) {
		t.Errorf("the text does not say there is no peak within reach:\n%s", s)
	}
	if strings.Contains(s, fmt.Sprintf("%.1f", raw)) || strings.Contains(s, groupDigits(int64(raw))) {
		t.Errorf("the text prints the absurd peak %.0f", raw)
	}
}

// TestRepeatsSection: the repeats table, and the line under the ceiling says
// whether the repeats agree on it.
func TestRepeatsSection(t *testing.T) {
	for _, moves := range []bool{false, true} {
		st := &analyze.CeilingStability{Stable: !moves, Share: 1, Text: "8 in 100% of repeats", Low: pf(8), High: pf(8)}
		if moves {
			st.Share, st.Text, st.High = 0.5, "8 in 50% of repeats, else 16 (50%)", pf(16)
		}
		a := &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{RunID: "r", RepeatCeiling: st,
			Repeats: []analyze.RepeatSpread{{Concurrency: 1, Levels: []int{0, 1}, OutputTokSMin: 10, OutputTokSMax: 12, TTFTP99Min: pf(0.1), TTFTP99Max: pf(0.12)}}}}}
		s := text(t, a)
		if !strings.Contains(s, "Repeats") || !strings.Contains(s, "10.0–12.0") || !strings.Contains(s, "100ms–120ms") {
			t.Errorf("the text lacks the repeats table:\n%s", s)
		}
		if strings.Contains(s, "across repeats: MOVES") != moves || (moves && !strings.Contains(s, "read the ceiling as the range 8–16")) {
			t.Errorf("moves %v: the text misstates the move:\n%s", moves, s)
		}
	}
}

// TestTailFromScheduled: in open loop the tail table shows the latencies from the
// scheduled send beside those from the actual one, and says what they are.
func TestTailFromScheduled(t *testing.T) {
	l := analyze.Level{Level: 0, Rate: 10, TTFT: analyze.Summary{P99: pf(0.05)}, E2E: analyze.Summary{P99: pf(0.1)},
		TTFTFromScheduled: &analyze.Summary{P99: pf(0.45)}, E2EFromScheduled: &analyze.Summary{P99: pf(0.5)}}
	s := text(t, &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{RunID: "r", Levels: []analyze.Level{l}}}})
	if !strings.Contains(s, "TTFT p99 sched") || !strings.Contains(s, "coordinated omission") || !strings.Contains(s, "450ms") {
		t.Errorf("the text lacks the corrected latencies:\n%s", s)
	}
	l.TTFTFromScheduled, l.E2EFromScheduled = nil, nil
	if s := text(t, &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{RunID: "r", Levels: []analyze.Level{l}}}}); strings.Contains(s, "sched") {
		t.Errorf("closed loop shows latencies from the scheduled send:\n%s", s)
	}
}

// The server counters table keeps a level without a scrape in its window, marked,
// beside one with counters.
func TestServerTableKeepsLevelWithoutScrape(t *testing.T) {
	run := func(v float64) *float64 { return &v }
	a := &analyze.Analysis{Schema: analyze.Schema, Runs: []analyze.Run{{RunID: "r", Levels: []analyze.Level{
		{Level: 0, Concurrency: 2, Requests: 20, Valid: true, Server: &analyze.ServerCounters{RunningMean: run(2), RunningMax: run(2)}},
		{Level: 1, Concurrency: 8, Requests: 20, Valid: true},
	}}}}
	tab := serverTable(&a.Runs[0])
	if tab == nil || len(tab.rows) != 2 {
		t.Fatalf("server table %+v: want both levels", tab)
	}
	if got := tab.rows[1]; got[1] != "c=8" || got[3] != "no scrape" {
		t.Errorf("level 1's row %q: want c=8 and \"no scrape\" under server running", got)
	}
}
