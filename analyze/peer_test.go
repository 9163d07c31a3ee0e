package analyze

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/record"
)

// peerDir holds real vLLM `bench serve` results with per-request arrays and vLLM's
// own summary numbers (see its INDEX.md). It is read in place, never copied.
const peerDir = "../../shared/peer-results"

// peerResult is the part of a vLLM benchmark result this test uses.
type peerResult struct {
	OutputLens []int       `json:"output_lens"`
	TTFTs      []float64   `json:"ttfts"`
	ITLs       [][]float64 `json:"itls"`
	StartTimes []float64   `json:"start_times"`
	Errors     []string    `json:"errors"`
	// Summary numbers in ms, as vLLM computed them.
	Summary map[string]any `json:"-"`
}

func loadPeerResults(t *testing.T) map[string]peerResult {
	t.Helper()
	if _, err := os.Stat(peerDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("peer results missing at %s: %v", peerDir, err)
		}
		t.Skipf("peer results not found at %s (%v)", peerDir, err)
	}
	files, err := filepath.Glob(filepath.Join(peerDir, "*.json*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no peer result files in %s: %v", peerDir, err)
	}
	out := map[string]peerResult{}
	add := func(name string, data []byte) {
		var r peerResult
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal(data, &r.Summary); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = r
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".jsonl") {
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(nil, 64<<20)
			for i := 0; sc.Scan(); i++ {
				add(fmt.Sprintf("%s#%d", filepath.Base(f), i), sc.Bytes())
			}
			continue
		}
		add(filepath.Base(f), data)
	}
	return out
}

// TestMatchesVLLMBenchServe turns the per-request arrays of real vLLM benchmark runs
// into a trace (one level per result) and checks that TTFT, ITL and TPOT mean,
// median and percentiles match vLLM's own summary numbers.
//
// Tolerances: INDEX.md gives 1e-12 (TTFT, ITL) and 2e-6 relative (TPOT, whose E2E
// vLLM rebuilds from ttft + sum(itls)) for float arrays. The trace format stores
// times as integer ns and gaps as integer µs, so the bounds add that quantization:
// 1 ns for TTFT, 0.5 µs for ITL (rounding is monotone, so every order statistic and
// their interpolation move by at most half a step), 1 ns / (output−1) for TPOT.
func TestMatchesVLLMBenchServe(t *testing.T) {
	peers := loadPeerResults(t)
	names := make([]string, 0, len(peers))
	for n := range peers {
		names = append(names, n)
	}
	sort.Strings(names)

	var rows []record.Row
	var id int64
	for lvl, name := range names {
		p := peers[name]
		if len(p.TTFTs) != len(p.ITLs) || len(p.TTFTs) != len(p.OutputLens) {
			t.Fatalf("%s: arrays of different lengths", name)
		}
		for i, ttft := range p.TTFTs {
			if len(p.Errors) > i && p.Errors[i] != "" {
				continue // none in these files; vLLM leaves failures out anyway
			}
			sent := t0 + int64(lvl)*1e12 + int64(i)*1e9
			if len(p.StartTimes) == len(p.TTFTs) {
				sent = t0 + int64(lvl)*1e12 + int64(math.Round((p.StartTimes[i]-p.StartTimes[0])*1e9))
			}
			e2e := ttft
			g := make([]int32, len(p.ITLs[i]))
			for k, v := range p.ITLs[i] {
				e2e += v
				g[k] = int32(math.Round(v * 1e6))
			}
			first := sent + int64(math.Round(ttft*1e9))
			id++
			rows = append(rows, record.Row{
				RunID: "peers", Level: int32(lvl), Concurrency: 1, RequestID: id, Worker: int32(i),
				ScheduledNs: sent, SentNs: sent, FirstTokenNs: &first, FirstContentNs: &first,
				EndNs: sent + int64(math.Round(e2e*1e9)), ChunkGapsUs: g, OutputTokens: i32(int32(p.OutputLens[i])),
				TokensSource: "usage", Status: 200,
			})
		}
	}
	path := writeTrace(t, t.TempDir(), "peers.parquet", record.RunInfo{RunID: "peers"}, rows)
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	levels := a.Runs[0].Levels
	if len(levels) != len(names) {
		t.Fatalf("got %d levels, want %d", len(levels), len(names))
	}
	checked := 0
	for lvl, name := range names {
		p, l := peers[name], levels[lvl]
		for _, m := range []struct {
			metric string
			s      Summary
			tol    func(v float64) float64
		}{
			{"ttft", l.TTFT, func(v float64) float64 { return 1e-9 + 1e-12*math.Abs(v) }},
			{"itl", l.ITL, func(v float64) float64 { return 5e-7 + 1e-12*math.Abs(v) }},
			{"tpot", l.TPOT, func(v float64) float64 { return 1e-9 + 2e-6*math.Abs(v) }},
		} {
			for _, stat := range []struct {
				key string
				got *float64
			}{
				{"mean", m.s.Mean}, {"median", m.s.P50}, {"p50", m.s.P50}, {"p90", m.s.P90},
				{"p95", m.s.P95}, {"p99", m.s.P99},
			} {
				want, ok := p.Summary[stat.key+"_"+m.metric+"_ms"].(float64)
				if !ok {
					continue
				}
				want /= 1e3
				checked++
				if m.s.N == 0 {
					// vLLM writes 0 for the statistics of an empty list ("or 0");
					// ceiling reports them as null with n = 0.
					if want != 0 || stat.got != nil {
						t.Errorf("%s %s %s: n = 0, got %v, vLLM %g", name, m.metric, stat.key, stat.got, want)
					}
					continue
				}
				if stat.got == nil || math.Abs(*stat.got-want) > m.tol(want) {
					t.Errorf("%s %s %s = %v, vLLM %.12g (tolerance %g)", name, m.metric, stat.key, deref(stat.got), want, m.tol(want))
				}
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d statistics compared; the peer files changed?", checked)
	}
	t.Logf("%d statistics of %d vLLM results match", checked, len(names))
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
