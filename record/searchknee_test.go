package record

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// engineTokS is the closed-loop output throughput of the test engine at
// concurrency c, from its configuration alone: c requests at a time, each of
// output tokens, lasting TTFT + (output − 1) gaps, a gap being TokenGap plus
// BatchGap for each running request past DecodeBatch (enginetest.Config). It
// leaves out the client's turnaround between a worker's requests (a few ms
// against requests of a few hundred).
func engineTokS(cfg enginetest.Config, output int, c float64) float64 {
	gap := cfg.TokenGap + time.Duration(math.Max(0, c-float64(cfg.DecodeBatch))*float64(cfg.BatchGap))
	d := cfg.TTFT + time.Duration(output-1)*gap
	return c * float64(output) / d.Seconds()
}

// kneeTruth is the knee of that curve as the search's criterion defines it: the
// highest concurrency whose throughput gain per doubling from the one below is
// at least knee (each step scaled to a doubling, gainPerDoubling). It is found
// from the configuration, never from a run.
func kneeTruth(cfg enginetest.Config, output int, knee float64) float64 {
	for c := 2.0; c <= MaxConcurrency; c++ {
		if gainPerDoubling(c-1, engineTokS(cfg, output, c-1), c, engineTokS(cfg, output, c)) < knee {
			return c - 1
		}
	}
	return MaxConcurrency
}

// TestRecordSearchKneeBound: a server without a slot cap whose decode step grows
// with the batch past DecodeBatch (enginetest's roofline): its throughput keeps
// rising past the knee, by under the 5% per doubling the knee criterion asks, and
// no request waits for a slot. The search must bracket the knee derived from the
// configuration, within its resolution, bound by the knee; from 1, and from a
// start above the knee.
func TestRecordSearchKneeBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch int
		start float64
	}{
		{"knee at 4, from 1", 4, 0},
		{"knee at 6, from 12", 6, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const output = 32 // searchOptions's
			cfg := enginetest.Config{Model: "m", TTFT: 50 * time.Millisecond, TokenGap: 10 * time.Millisecond, DecodeBatch: tc.batch}
			// Past the knee a request adds 96% of what makes a step at the knee
			// pay off, so a doubling there gains about 2%: rising, below 5%.
			d := cfg.TTFT + time.Duration(output-1)*cfg.TokenGap
			cfg.BatchGap = time.Duration(0.96 * float64(d) / float64(tc.batch*(output-1)))
			truth := kneeTruth(cfg, output, defaultKnee)
			b := float64(tc.batch)
			past := engineTokS(cfg, output, 2*b)/engineTokS(cfg, output, b) - 1
			if truth != b || past <= 0 || past >= defaultKnee {
				t.Fatalf("configuration: knee %g (want the decode batch %d), gain per doubling past it %.1f%% (want rising, below 5%%)", truth, tc.batch, 100*past)
			}
			eng := enginetest.New(cfg)
			defer eng.Close()
			o := searchOptions(t, eng.URL())
			o.SearchStart = tc.start
			info, err := Record(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			s := info.Search
			if s == nil || !s.Done {
				t.Fatalf("search %+v", s)
			}
			res := math.Max(0.1*truth, 1)
			exact := strings.Contains(s.Answer, "bound by the knee: from ")
			if math.Abs(s.Ceiling-truth) > res || (!exact && s.Hi-s.Lo > res) || s.Bound != "knee" {
				t.Errorf("answer %q: want %g (±%g, bracket within it) bound by the knee; path%s", s.Answer, truth, res, path(info.Levels))
			}
			// Not a slot cap: past the knee requests still start at once, so the
			// throughput, not a queue, is what stopped the search.
			a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{Resamples: -1, TimelineLevel: -1})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range a.Runs[0].Levels {
				if l.TTFT.P50 == nil || *l.TTFT.P50 > cfg.TTFT.Seconds()+0.05 {
					t.Errorf("c=%d: TTFT p50 %v, want the engine's %v: a request waited", l.Concurrency, fmtPtr(l.TTFT.P50), cfg.TTFT)
				}
			}
			if !strings.Contains(s.Answer, "bound by knee") && !exact {
				t.Errorf("answer %q", s.Answer)
			}
			t.Logf("truth %g; %s; path%s", truth, s.Answer, path(info.Levels))
		})
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%.3fs", *p)
}
