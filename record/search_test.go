package record

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// simServer is a server with a known ceiling for the pure search: its throughput
// grows linearly up to batch (then flat), an SLO fails above slo, errors above
// errs; invalidOnce lists levels whose first run is invalid.
type simServer struct {
	batch, slo, errs float64
	invalidOnce      map[float64]bool
	alwaysInvalid    float64 // every run at this level is invalid
}

func (s simServer) run(x float64, phase string, scale int, seen map[float64]int) searchLevel {
	l := searchLevel{x: x, phase: phase, tokS: 10 * math.Min(x, s.batch)}
	seen[x]++
	if (s.invalidOnce[x] && seen[x] == 1) || x == s.alwaysInvalid {
		l.invalid = fmt.Sprintf("too short at scale %d", scale)
		return l
	}
	if s.slo > 0 && x > s.slo {
		l.failed = append(l.failed, "ttft p95")
		l.evidence = append(l.evidence, fmt.Sprintf("ttft p95 too high at %g", x))
	}
	if s.errs > 0 && x > s.errs {
		l.failed = append(l.failed, "errors")
		l.evidence = append(l.evidence, "errors above 5%")
	}
	return l
}

// runSearch drives the pure search against sim until it is done (at most 60 levels).
func runSearch(t *testing.T, cfg searchConfig, sim simServer) ([]searchLevel, searchState) {
	t.Helper()
	var levels []searchLevel
	seen := map[float64]int{}
	for range 60 {
		m := nextSearchLevel(cfg, levels)
		if m.done {
			return levels, judgeSearch(cfg, levels)
		}
		if m.x <= 0 || (cfg.limit > 0 && m.x > cfg.limit) {
			t.Fatalf("move to %g (limit %g) after %v", m.x, cfg.limit, xs(levels))
		}
		levels = append(levels, sim.run(m.x, m.phase, m.scale, seen))
	}
	t.Fatalf("search did not finish: %v", xs(levels))
	return nil, searchState{}
}

func xs(levels []searchLevel) []string {
	var out []string
	for _, l := range levels {
		out = append(out, fmt.Sprintf("%g(%s)", l.x, l.phase))
	}
	return out
}

func baseCfg() searchConfig {
	return searchConfig{start: 1, limit: 1024, limitWhy: "the maximum of 1024", integer: true,
		resPct: 0.10, resAbs: 1, knee: 0.05, maxReruns: 3, unit: "concurrent requests"}
}

func TestSearchFindsKnownCeilings(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name  string
		sim   simServer
		start float64
		limit float64
		truth float64
		bound string
	}{
		{"batch 8 from 1", simServer{batch: 8}, 1, 1024, 8, "knee"},
		{"batch 6 from 1", simServer{batch: 6}, 1, 1024, 6, "knee"},
		{"batch 37 from 1", simServer{batch: 37}, 1, 1024, 37, "knee"},
		{"batch 8 from a prediction of 24", simServer{batch: 8}, 24, 1024, 8, "knee"},
		{"batch 100 from a prediction of 24", simServer{batch: 100}, 24, 1024, 100, "knee"},
		{"slo 20 from 1", simServer{batch: inf, slo: 20}, 1, 1024, 20, "ttft p95"},
		{"slo 20 from 64", simServer{batch: inf, slo: 20}, 64, 1024, 20, "ttft p95"},
		{"slo 3 from 1", simServer{batch: inf, slo: 3}, 1, 1024, 3, "ttft p95"},
		{"errors 12 under batch 50", simServer{batch: 50, errs: 12}, 1, 1024, 12, "errors"},
		{"kv limit 24", simServer{batch: inf}, 1, 24, 24, ""},
		{"kv limit 24, started there", simServer{batch: inf}, 24, 24, 24, ""},
		{"batch 10 below kv limit 24", simServer{batch: 10}, 24, 24, 10, "knee"},
		{"invalid levels rerun", simServer{batch: 8, invalidOnce: map[float64]bool{4: true, 12: true}}, 1, 1024, 8, "knee"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseCfg()
			cfg.start, cfg.limit = tc.start, tc.limit
			levels, st := runSearch(t, cfg, tc.sim)
			res := cfg.resolution(tc.truth)
			if math.Abs(st.lo-tc.truth) > res {
				t.Errorf("ceiling %g, truth %g (resolution %g); path %v", st.lo, tc.truth, res, xs(levels))
			}
			if st.hi != 0 && !st.kneeAtLo() && st.hi-st.lo > cfg.resolution(st.lo) {
				t.Errorf("bracket %g..%g wider than the resolution; path %v", st.lo, st.hi, xs(levels))
			}
			if tc.bound != "" && !strings.Contains(st.bound, tc.bound) {
				t.Errorf("bound %q, want %q; path %v", st.bound, tc.bound, xs(levels))
			}
			for _, l := range levels {
				if l.x > tc.limit {
					t.Errorf("level %g beyond the limit %g", l.x, tc.limit)
				}
			}
			t.Logf("%s: %v -> %s", tc.name, xs(levels), searchAnswer(cfg, st, true))
		})
	}
}

func TestSearchInvalidLevelIsRerunLongerThenFails(t *testing.T) {
	cfg := baseCfg()
	levels, st := runSearch(t, cfg, simServer{batch: 1e9, alwaysInvalid: 16})
	var scales []int
	seen := map[float64]int{}
	var replay []searchLevel
	for _, l := range levels {
		m := nextSearchLevel(cfg, replay)
		if m.x == 16 {
			scales = append(scales, m.scale)
		}
		replay = append(replay, l)
		seen[l.x]++
	}
	if got := fmt.Sprint(scales); got != "[1 2 4 8]" {
		t.Errorf("level 16 ran at scales %s, want [1 2 4 8]", got)
	}
	if st.hi != 16 || st.bound != "validity" {
		t.Errorf("bracket ..%g bound %q, want 16 bound by validity; path %v", st.hi, st.bound, xs(levels))
	}
	if st.lo < 14 || st.lo > 15 {
		t.Errorf("ceiling %g, want 14..15 (below the level that never ran validly)", st.lo)
	}
}

func TestSearchSustainsTheCeiling(t *testing.T) {
	cfg := baseCfg()
	cfg.sustain = true
	levels, st := runSearch(t, cfg, simServer{batch: 1e9, slo: 10})
	last := levels[len(levels)-1]
	if last.phase != "sustain" || last.x != st.lo || st.lo != 10 {
		t.Errorf("last level %g (%s), ceiling %g: want the sustain level at the ceiling 10", last.x, last.phase, st.lo)
	}
}

func TestSearchNothingPasses(t *testing.T) {
	cfg := baseCfg()
	cfg.start = 8
	levels, st := runSearch(t, cfg, simServer{batch: 1e9, errs: 0.5})
	if st.lo != 0 || st.hi != 1 {
		t.Errorf("bracket %g..%g, want nothing passing down to 1; path %v", st.lo, st.hi, xs(levels))
	}
	if a := searchAnswer(cfg, st, true); !strings.HasPrefix(a, "no ceiling found: no level passed; 1 already fails errors") {
		t.Errorf("answer %q", a)
	}
}

func TestSearchAnswerWording(t *testing.T) {
	cfg := baseCfg()
	st := searchState{lo: 12, hi: 13, bound: "ttft p95", boundEvidence: "ttft p95 2.31 s > 2 s", boundSeen: true}
	want := "ceiling 12 concurrent requests (bracket 12..13), bound by ttft p95 at 13: ttft p95 2.31 s > 2 s"
	if got := searchAnswer(cfg, st, true); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	cfg.limit, cfg.limitWhy = 24, "the server's KV cache holds 24 requests"
	st = searchState{lo: 24}
	if got := searchAnswer(cfg, st, true); !strings.Contains(got, "ceiling 24 concurrent requests (not run beyond 24), bound by the search's limit: the server's KV cache holds 24 requests") {
		t.Errorf("got %q", got)
	}
	if got := searchAnswer(cfg, searchState{lo: 4, hi: 8, bound: "knee"}, false); !strings.HasPrefix(got, "search not finished: so far ceiling 4") {
		t.Errorf("got %q", got)
	}
}

func TestSearchGainPerDoubling(t *testing.T) {
	for _, tc := range []struct{ x0, t0, x1, t1, want float64 }{
		{4, 40, 8, 80, 1},
		{8, 80, 16, 80, 0},
		{8, 80, 16, 84, 0.05},
		{4, 40, 16, 160, 1},
		{0.5, 0, 1, 10, math.Inf(1)},
	} {
		if got := gainPerDoubling(tc.x0, tc.t0, tc.x1, tc.t1); math.Abs(got-tc.want) > 1e-9 && got != tc.want {
			t.Errorf("gain(%g,%g → %g,%g) = %g, want %g", tc.x0, tc.t0, tc.x1, tc.t1, got, tc.want)
		}
	}
}

// TestSearchRemeasuresADrop: a level whose first measurement fell 15% below the
// level before it (interference on a busy machine) is measured again before the
// knee may use it; the answer is the server's, not the interference's. Here the
// server scales linearly to 12: a drop at 16 taken as a plateau would put the
// knee at 8.
func TestSearchRemeasuresADrop(t *testing.T) {
	cfg := baseCfg()
	var levels []searchLevel
	seen := map[float64]int{}
	sim := simServer{batch: 12}
	for range 60 {
		m := nextSearchLevel(cfg, levels)
		if m.done {
			break
		}
		l := sim.run(m.x, m.phase, m.scale, seen)
		if m.x == 16 && seen[16] == 1 {
			l.tokS = 0.85 * 80 // the first c=16 ran beside another job: below c=8
		}
		levels = append(levels, l)
	}
	st := judgeSearch(cfg, levels)
	path := fmt.Sprint(xs(levels))
	if !strings.Contains(path, "16(remeasure)") {
		t.Errorf("the drop at 16 was not measured again: %s", path)
	}
	if math.Abs(st.lo-12) > cfg.resolution(12) {
		t.Errorf("ceiling %g, want 12; path %s: %s", st.lo, path, searchAnswer(cfg, st, true))
	}
}

// TestSearchStepsDownToWhatTheServerRan: a vLLM-like server with 8 request slots
// (max_num_seqs, which vLLM does not publish) and a KV cache declared for 285
// requests. The start at 285 is invalid because the server queued (its counters:
// 8 running, 277 waiting): the search steps down to 8 instead of re-running 285
// longer, and names the batch limit.
func TestSearchStepsDownToWhatTheServerRan(t *testing.T) {
	cfg := baseCfg()
	cfg.start, cfg.limit = 285, 285
	var levels []searchLevel
	for range 20 {
		m := nextSearchLevel(cfg, levels)
		if m.done {
			break
		}
		l := searchLevel{x: m.x, phase: m.phase, tokS: 100 * math.Min(m.x, 8)}
		if m.x > 8 {
			l.invalid = "the window is shorter than 2 request lifetimes"
			l.queued, l.waiting = 8, m.x-8
		}
		levels = append(levels, l)
	}
	st := judgeSearch(cfg, levels)
	path := xs(levels)
	if len(path) < 2 || path[1] != "8(down)" {
		t.Errorf("after 285 the search went to %v, want 8 (what the server ran)", path)
	}
	for _, l := range levels {
		if l.phase == "rerun" {
			t.Errorf("an invalid level the server queued at was re-run: %v", path)
		}
	}
	if st.lo != 8 || st.bound != "batch" || len(levels) > 4 {
		t.Errorf("ceiling %g bound %q in %d levels, want 8 bound by batch in at most 4; path %v: %s", st.lo, st.bound, len(levels), path, searchAnswer(cfg, st, true))
	}
	if a := searchAnswer(cfg, st, true); !strings.Contains(a, "ran at most 8 requests at once while 277 waited") {
		t.Errorf("answer %q does not name the server's counters", a)
	}
}

// TestSearchAtTheDeclaredLimit: a server that declares room for 11 requests and
// still scales linearly there: the level at the limit passes, one level below it
// shows the curve still rising, and the search stops (two levels).
func TestSearchAtTheDeclaredLimit(t *testing.T) {
	cfg := baseCfg()
	cfg.start, cfg.limit = 11, 11
	levels, st := runSearch(t, cfg, simServer{batch: math.Inf(1)})
	if len(levels) != 2 || st.lo != 11 {
		t.Errorf("ceiling %g in %v, want 11 in two levels (11, then one below)", st.lo, xs(levels))
	}
	if a := searchAnswer(cfg, st, true); !strings.Contains(a, "bound by the search's limit") {
		t.Errorf("answer %q", a)
	}
}

// TestSearchUnderRunToRunNoise: the pure search against a server whose every
// level's throughput carries 3% lognormal noise (what kneerule assumes), 300
// times: the ceiling must land within the resolution of the truth in at least
// 90% of the searches, and never name a knee more than the resolution below it.
func TestSearchUnderRunToRunNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name  string
		batch float64
		start float64
	}{
		{"batch 8 from 1", 8, 1},
		{"batch 12 from a prediction of 24", 12, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseCfg()
			cfg.start = tc.start
			const runs = 300
			within, below, levelsRun := 0, 0, 0
			var answers []string
			for range runs {
				var levels []searchLevel
				for range 60 {
					m := nextSearchLevel(cfg, levels)
					if m.done {
						break
					}
					levels = append(levels, searchLevel{x: m.x, phase: m.phase,
						tokS: 10 * math.Min(m.x, tc.batch) * math.Exp(0.03*rng.NormFloat64())})
				}
				st := judgeSearch(cfg, levels)
				levelsRun += len(levels)
				res := cfg.resolution(tc.batch)
				switch {
				case math.Abs(st.lo-tc.batch) <= res:
					within++
				case st.lo < tc.batch-res:
					below++
					answers = append(answers, fmt.Sprintf("%v -> %g", xs(levels), st.lo))
				}
			}
			t.Logf("within the resolution: %d of %d; below: %d; %.1f levels a search", within, runs, below, float64(levelsRun)/runs)
			if within < runs*9/10 {
				t.Errorf("within the resolution of %g in %d of %d searches, want ≥ 90%%", tc.batch, within, runs)
			}
			if below > runs/50 {
				t.Errorf("%d searches of %d answered below the truth %g: %v", below, runs, tc.batch, answers[:min(3, len(answers))])
			}
		})
	}
}
