package record

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/searchrule"
	"github.com/ceiling-llm/ceiling/trace"
)

// The search's I/O: the recorder's side of search.go. Each level of a search is an
// ordinary sealed level whose LevelInfo.Search says why it ran and, once judged,
// how; the judgement reads the sealed parts with Options.Analyzer (the command
// line's is package analyze), so it is the analysis's own figures. A level sealed but not judged (a kill in between) is judged when
// --resume continues, from the same parts: the same answer.

const (
	// defaultKnee is the gain per doubling below which a level fails the knee:
	// the 5% the doubling auto rule stopped at.
	defaultKnee = 0.05
	// searchMaxReruns is how often an invalid level is run again, longer (×2,
	// ×4, ×8), before it counts as failing validity.
	searchMaxReruns = 3
	// maxAutoRate bounds --rate auto (requests/s).
	maxAutoRate = 10000
)

// parseResolution reads "10%", "2" or "10%,1": the share of the bracket's lower
// end and the absolute width, the larger of which the bracket must be within.
func parseResolution(s string) (share, abs float64, err error) {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if strings.HasSuffix(f, "%") {
			v, perr := strconv.ParseFloat(strings.TrimSuffix(f, "%"), 64)
			if perr != nil || !(v > 0 && v < 100) {
				return 0, 0, fmt.Errorf("%q: want a share like 10%% (above 0, below 100)", f)
			}
			share = v / 100
			continue
		}
		v, perr := strconv.ParseFloat(f, 64)
		if perr != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("%q: want a positive width like 1, or a share like 10%%", f)
		}
		abs = v
	}
	if share == 0 && abs == 0 {
		return 0, 0, fmt.Errorf("%q: want 10%%, 1 or 10%%,1", s)
	}
	return share, abs, nil
}

// searchPlan is the search's settings as the trace's plan stores them.
func (o *Options) searchPlan() *trace.SearchPlan {
	p := &trace.SearchPlan{Resolution: o.Resolution, BeyondKV: o.BeyondKV, SustainS: o.Sustain.Seconds(), Start: o.SearchStart}
	for _, c := range o.Criteria {
		p.Criteria = append(p.Criteria, c.String())
		if c.Kind == "latency" {
			p.SLOs = append(p.SLOs, trace.SLOTarget{Metric: c.Metric, Percentile: c.P, Seconds: c.Limit})
		}
	}
	knee := 0.0
	if o.Knee > 0 {
		knee = o.Knee
		p.Criteria = append(p.Criteria, fmt.Sprintf("knee: gain >= %s per doubling", searchrule.Pct(o.Knee)))
	}
	p.Knee = &knee
	if p.Criteria == nil {
		p.Criteria = []string{}
	}
	return p
}

// searchConfig is the pure search's configuration for this recording: its limit
// from what the server's KV cache holds, its start, its resolution.
func (r *recorder) searchConfig() searchConfig {
	o := &r.opts
	share, abs, _ := parseResolution(o.Resolution)
	cfg := searchConfig{resPct: share, resAbs: abs, maxReruns: searchMaxReruns, sustain: o.Sustain > 0}
	if o.Knee > 0 {
		cfg.knee = o.Knee
	}
	if o.RateAuto {
		cfg.unit = "requests/s"
		cfg.limit, cfg.limitWhy = maxAutoRate, fmt.Sprintf("the search's maximum of %d requests/s", maxAutoRate)
		cfg.start = 1
		if o.SearchStart > 0 {
			cfg.start = math.Min(o.SearchStart, cfg.limit)
		}
		return cfg
	}
	cfg.unit, cfg.integer = "concurrent requests", true
	cfg.limit, cfg.limitWhy = float64(o.MaxAutoConcurrency), fmt.Sprintf("the search's maximum of %d", o.MaxAutoConcurrency)
	holds := r.kvHolds()
	if holds > 0 && !o.BeyondKV && float64(holds) < cfg.limit {
		per := o.PromptTokens + o.OutputTokens
		cfg.limit = float64(holds)
		cfg.limitWhy = fmt.Sprintf("the server's KV cache (%s) holds %d requests of %d tokens; --beyond-kv searches past it", kvDeclared(r.info.Server), holds, per)
	}
	if o.RequestsPerLevel > 0 && float64(o.RequestsPerLevel) < cfg.limit {
		cfg.limit = float64(o.RequestsPerLevel)
		cfg.limitWhy = fmt.Sprintf("--requests-per-level %d (a level needs at least as many requests as workers)", o.RequestsPerLevel)
	}
	cfg.start = 1
	// The start is what the server surely holds: where it declared only a range
	// (llama.cpp's slots share one cache or own one each), its lower end.
	if low := r.kvHoldsAtLeast(); low > 0 {
		holds = low
	}
	switch slots := r.declaredSlots(); {
	case o.SearchStart > 0:
		cfg.start = o.SearchStart
	case holds > 0 && slots > 0:
		cfg.start = float64(min(holds, slots))
	case holds > 0:
		cfg.start = float64(holds)
	case slots > 0:
		cfg.start = float64(slots)
	}
	cfg.start = math.Max(1, math.Min(math.Floor(cfg.start), cfg.limit))
	return cfg
}

// searchStartWhy says where the search's start comes from, for the progress.
func (r *recorder) searchStartWhy(cfg searchConfig) string {
	o := &r.opts
	switch {
	case o.SearchStart > 0 && o.SearchStartWhy != "":
		return o.SearchStartWhy
	case o.SearchStart > 0:
		return "as given"
	case cfg.start > 1:
		return "the server's declared capacity"
	}
	return "nothing predicted or declared"
}

// kvHolds is how many requests of the workload's length the server's declared KV
// cache holds (0: unknown).
func (r *recorder) kvHolds() int {
	per := int64(r.opts.PromptTokens + r.opts.OutputTokens)
	if r.kvCap <= 0 || per <= 0 {
		return 0
	}
	return max(1, int(r.kvCap/per))
}

// kvHoldsAtLeast is how many requests of the workload's length the lower end of
// a declared KV range holds (0: no range declared).
func (r *recorder) kvHoldsAtLeast() int {
	s := r.info.Server
	per := int64(r.opts.PromptTokens + r.opts.OutputTokens)
	if s.KVCapacityTokens != nil || s.KVCapacityMinTokens == nil || *s.KVCapacityMinTokens <= 0 || per <= 0 {
		return 0
	}
	return max(1, int(*s.KVCapacityMinTokens/per))
}

// declaredSlots is the server's declared slot count (llama.cpp), 0 when unknown.
func (r *recorder) declaredSlots() int {
	if s := r.info.Server.Slots; s != nil && *s > 0 {
		return int(*s)
	}
	return 0
}

// searchPoints turns the judged levels into the pure search's levels: the
// repeats of one point (--repeat) are one level, failing when any repeat fails,
// invalid when any is, at their mean throughput. index maps each point back to
// its LevelInfo indices.
func searchPoints(levels []trace.LevelInfo, rate bool) (pts []searchLevel, index [][]int) {
	for i, li := range levels {
		s := li.Search
		if s == nil || s.Verdict == "pending" {
			continue
		}
		x := float64(li.Concurrency)
		if rate {
			x = li.Rate
		}
		if li.Repeat > 0 && len(pts) > 0 && pts[len(pts)-1].x == x {
			p := &pts[len(pts)-1]
			n := float64(len(index[len(index)-1]))
			p.tokS = (p.tokS*n + s.OutputTokS) / (n + 1)
			p.failed = append(p.failed, s.OwnFailed...)
			p.evidence = append(p.evidence, s.OwnEvidence...)
			if s.Invalid != "" {
				p.invalid = strings.TrimPrefix(p.invalid+"; "+s.Invalid, "; ")
			}
			index[len(index)-1] = append(index[len(index)-1], i)
			continue
		}
		pts = append(pts, searchLevel{x: x, phase: s.Phase, invalid: s.Invalid,
			failed: slices.Clone(s.OwnFailed), evidence: slices.Clone(s.OwnEvidence), tokS: s.OutputTokS,
			relSE: s.OutputTokSRelSE, queued: s.Queued, waiting: s.Waiting})
		index = append(index, []int{i})
	}
	return pts, index
}

// searchNext decides the search's next level (index i), or that it is done.
func (r *recorder) searchNext(i int) (level, *trace.SearchStep, bool) {
	cfg := r.searchConfig()
	n := max(r.opts.Repeat, 1)
	// The repeats of the last point first.
	if k := len(r.info.Levels); k > 0 {
		last := r.info.Levels[k-1]
		if s := last.Search; s != nil && last.Repeat < n-1 {
			lv := level{index: i, point: i, repeat: last.Repeat + 1, repeats: n, concurrency: last.Concurrency, rate: last.Rate, scale: max(s.Scale, 1)}
			if s.Phase == "sustain" {
				lv.duration = r.opts.Sustain
			}
			return lv, &trace.SearchStep{Phase: s.Phase, Scale: s.Scale, Verdict: "pending"}, true
		}
	}
	pts, _ := searchPoints(r.info.Levels, r.opts.RateAuto)
	m := nextSearchLevel(cfg, pts)
	if m.done {
		return level{}, nil, false
	}
	lv := level{index: i, point: i, scale: max(m.scale, 1)}
	if n > 1 {
		lv.repeats = n
	}
	if r.opts.RateAuto {
		lv.rate = m.x
	} else {
		lv.concurrency = int(m.x)
	}
	if m.phase == "sustain" {
		lv.duration = r.opts.Sustain
	}
	step := &trace.SearchStep{Phase: m.phase, Verdict: "pending"}
	if m.scale > 1 {
		step.Scale = m.scale
	}
	if len(pts) == 0 {
		r.progress("search: starting at %s %s (%s); limit %s (%s)", fmtX(cfg.start), cfg.unit, r.searchStartWhy(cfg), fmtX(cfg.limit), cfg.limitWhy)
	}
	return lv, step, true
}

// judgePending judges the sealed levels still pending, from the parts on disk, and
// brings the search's verdicts, bracket and answer up to date.
func (r *recorder) judgePending(ctx context.Context) error {
	var pending []int
	for i, li := range r.info.Levels {
		if li.Search != nil && li.Search.Verdict == "pending" {
			pending = append(pending, i)
		}
	}
	if len(pending) > 0 {
		byLevel, err := r.analyzeParts(ctx)
		if err != nil {
			return err
		}
		for _, i := range pending {
			li := &r.info.Levels[i]
			l, ok := byLevel[li.Level]
			s := *li.Search
			switch {
			case !ok:
				s.Invalid = "no row of the level could be analysed"
			default:
				s.OwnFailed, s.OwnEvidence, s.Invalid = searchrule.Judge(r.opts.Criteria, l)
				s.OutputTokS = l.OutputTokS
				s.OutputTokSRelSE = l.OutputTokSRelSE
				if !r.opts.RateAuto {
					s.Queued, s.Waiting = queuedAt(l)
				}
			}
			// Its own verdict; updateSearch adds the knee.
			s.Verdict = "pass"
			if s.Invalid != "" {
				s.Verdict = "invalid"
			}
			if len(s.OwnFailed) > 0 {
				s.Verdict = "fail"
			}
			li.Search = &s
		}
	}
	r.updateSearch(pending)
	return nil
}

// analyzeParts analyses the sealed parts: this run's levels by index.
func (r *recorder) analyzeParts(ctx context.Context) (map[int]searchrule.Figures, error) {
	if r.opts.Analyzer == nil {
		return nil, errors.New("judging the sealed levels: Options.Analyzer is not set (a search needs it)")
	}
	byLevel, err := r.opts.Analyzer(ctx, r.parts.Dir(), r.info.RunID, r.opts.Criteria)
	if err != nil {
		return nil, fmt.Errorf("analysing the sealed levels to judge them: %w", err)
	}
	return byLevel, nil
}

// queuedAt reads, from the server's own counters, whether it queued during the
// level: it ran clearly fewer requests than offered (at most 80%) while at least
// one waited on average. It returns what it ran at most and the mean waiting, or
// zeros.
func queuedAt(l searchrule.Figures) (ran, waiting float64) {
	s := l.Server
	if s == nil || s.RunningMax == nil || s.WaitingMean == nil || l.Concurrency <= 0 {
		return 0, 0
	}
	ran = math.Round(*s.RunningMax)
	if ran < 1 || ran > 0.8*float64(l.Concurrency) || *s.WaitingMean < 1 {
		return 0, 0
	}
	return ran, *s.WaitingMean
}

// updateSearch recomputes every level's verdict (the knee depends on the levels
// below), sets the bracket after each newly judged level, and the answer so far.
func (r *recorder) updateSearch(judged []int) {
	cfg := r.searchConfig()
	pts, index := searchPoints(r.info.Levels, r.opts.RateAuto)
	st := judgeSearch(cfg, pts)
	for k, v := range st.verdicts {
		for _, i := range index[k] {
			s := *r.info.Levels[i].Search
			s.Verdict, s.Failed, s.Evidence = v.verdict, v.failed, v.evidence
			if slices.Contains(judged, i) {
				s.Lo, s.Hi = st.lo, st.hi
				r.progress("search: %s%s (%s): %s%s; bracket %s", levelWord(r.opts.RateAuto), fmtX(pts[k].x), s.Phase,
					v.verdict, verdictDetail(v), bracketWords(st))
			}
			r.info.Levels[i].Search = &s
		}
	}
	var secs float64
	for _, li := range r.info.Levels {
		if li.Search != nil && li.Search.Phase != "sustain" {
			secs += li.Ended.Sub(li.Started).Seconds()
		}
	}
	res := &trace.SearchResult{Ceiling: st.lo, Lo: st.lo, Hi: st.hi, Bound: st.bound, Evidence: st.boundEvidence,
		Answer: searchAnswer(cfg, st, false), LevelSeconds: secs, Limit: cfg.limit, LimitWhy: cfg.limitWhy}
	if st.hi == 0 && cfg.limit > 0 && st.lo >= cfg.limit {
		res.Bound, res.Evidence = "limit", cfg.limitWhy
	}
	for k, p := range pts {
		if p.phase == "sustain" {
			res.Sustain = sustainWords(p, st.verdicts[k], r.opts.Sustain, cfg.unit)
		}
	}
	r.info.Search = res
}

// finishSearch marks the search done and states its answer; ErrNoCeiling when no
// level passed (the levels stay in the trace).
func (r *recorder) finishSearch() error {
	cfg := r.searchConfig()
	pts, _ := searchPoints(r.info.Levels, r.opts.RateAuto)
	st := judgeSearch(cfg, pts)
	r.updateSearch(nil)
	r.info.Search.Done = true
	r.info.Search.Answer = searchAnswer(cfg, st, true)
	r.info.StopReason = "search done: " + r.info.Search.Answer
	r.progress("%s", r.info.Search.Answer)
	if r.info.Search.Sustain != "" {
		r.progress("%s", r.info.Search.Sustain)
	}
	if st.lo == 0 {
		return fmt.Errorf("%w: %s", ErrNoCeiling, r.info.Search.Answer)
	}
	return nil
}

func levelWord(rate bool) string {
	if rate {
		return "rate="
	}
	return "c="
}

func verdictDetail(v searchVerdict) string {
	if len(v.evidence) == 0 {
		return ""
	}
	if len(v.failed) > 0 {
		var parts []string
		for i, f := range v.failed {
			ev := ""
			if i < len(v.evidence) {
				ev = v.evidence[i]
			}
			parts = append(parts, f+": "+ev)
		}
		return " (" + strings.Join(parts, "; ") + ")"
	}
	return " (" + strings.Join(v.evidence, "; ") + ")"
}

func bracketWords(st searchState) string {
	if st.hi == 0 {
		return fmtX(st.lo) + "..?"
	}
	return fmtX(st.lo) + ".." + fmtX(st.hi)
}

// sustainWords says how the ceiling held when sustained.
func sustainWords(p searchLevel, v searchVerdict, d time.Duration, unit string) string {
	switch v.verdict {
	case "pass":
		return fmt.Sprintf("sustained %s %s for %s: every criterion kept passing (%.1f tok/s)", fmtX(p.x), unit, d, p.tokS)
	case "fail":
		return fmt.Sprintf("sustained %s %s for %s: it did not hold: %s", fmtX(p.x), unit, d, strings.TrimPrefix(verdictDetail(v), " "))
	}
	return fmt.Sprintf("sustained %s %s for %s: not judged: %s", fmtX(p.x), unit, d, strings.Join(v.evidence, "; "))
}
