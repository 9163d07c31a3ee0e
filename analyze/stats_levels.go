package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Per-level statistics are computed in two streaming passes over a trace:
//
//  1. windowPass reads only the small per-row columns (no chunk gaps) and finds each
//     level's steady-state window: in closed loop from the moment every worker has a
//     request in flight (the latest first send of any worker) to the moment the first
//     worker runs out of work (the earliest last end of any worker); in open loop
//     from the first to the last scheduled arrival.
//  2. statsPass reads every column and accumulates latencies, the pooled chunk gaps
//     (as exact integer counts, see gapHist) and the tokens, completions and
//     occupancy that fall inside the window, using per-chunk arrival times
//     (first token + cumulative gaps).
//
// Memory is the gap counts, never the chunks themselves, plus the per-request
// latencies of the exact percentiles, which spill to disk as they arrive (spill.go)
// and are read back one level at a time.

// timelineMax is the most requests drawn on a level's timeline.
const timelineMax = 500

type levelKey struct {
	run   string
	level int32
}

// windowAcc is what the first pass learns about one level.
type windowAcc struct {
	concurrency int32
	rate        float64
	n           int // non-warm-up rows
	firstSent   int64
	lastEnd     int64
	minSched    int64
	maxSched    int64
	workers     map[int32]*[2]int64 // worker → first send, last end
}

// window returns the level's steady-state window and whether it is a real steady
// state (false: the level never had every worker busy at once, and the whole level
// span is used).
func (w *windowAcc) window() (start, end int64, steady bool) {
	if w.n == 0 {
		return 0, 0, false
	}
	if w.rate > 0 {
		if w.maxSched > w.minSched {
			return w.minSched, w.maxSched, true
		}
		return w.firstSent, w.lastEnd, false
	}
	start, end = math.MinInt64, math.MaxInt64
	for _, se := range w.workers {
		start = max(start, se[0])
		end = min(end, se[1])
	}
	if end > start {
		return start, end, true
	}
	return w.firstSent, w.lastEnd, false
}

// windowPass is the first pass over every file of every source.
type windowPass struct {
	levels   map[levelKey]*windowAcc
	runs     []string // run ids in order of first appearance
	excluded exclusions
}

// newWindowPass starts the first pass.
func newWindowPass() *windowPass {
	return &windowPass{levels: map[levelKey]*windowAcc{}, excluded: exclusions{}}
}

func (p *windowPass) batch(rec arrow.Record, cols map[string]int) error {
	var c batchCols
	c.load(rec, cols, false)
	if c.err != nil {
		return c.err
	}
	var key levelKey
	var acc *windowAcc
	for i := 0; i < int(rec.NumRows()); i++ {
		if c.warmup.Value(i) {
			continue
		}
		k := levelKey{c.runID.Value(i), c.level.Value(i)}
		if acc == nil || k != key {
			key = levelKey{strings.Clone(k.run), k.level}
			acc = p.levels[key]
		}
		if why := impossibleWindowRow(&c, i, acc); why != "" {
			p.excluded.add(key, why)
			if !containsString(p.runs, key.run) {
				p.runs = append(p.runs, key.run)
			}
			continue
		}
		if acc == nil {
			acc = &windowAcc{
				concurrency: c.concurrency.Value(i), rate: c.rate.Value(i),
				firstSent: math.MaxInt64, lastEnd: math.MinInt64,
				minSched: math.MaxInt64, maxSched: math.MinInt64,
				workers: map[int32]*[2]int64{},
			}
			p.levels[key] = acc
			if !containsString(p.runs, key.run) {
				p.runs = append(p.runs, key.run)
			}
		}
		sent, end, sched := c.sent.Value(i), c.end.Value(i), c.sched.Value(i)
		acc.n++
		acc.firstSent = min(acc.firstSent, sent)
		acc.lastEnd = max(acc.lastEnd, end)
		acc.minSched = min(acc.minSched, sched)
		acc.maxSched = max(acc.maxSched, sched)
		wk := c.worker.Value(i)
		if se := acc.workers[wk]; se != nil {
			se[0] = min(se[0], sent)
			se[1] = max(se[1], end)
		} else {
			acc.workers[wk] = &[2]int64{sent, end}
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// batchCols are the typed columns of one record batch.
type batchCols struct {
	runID, tokensSource, errText         *array.String
	level, concurrency, worker           *array.Int32
	promptTokens, outputTokens, targetPr *array.Int32
	maxTokens                            *array.Int32
	status                               *array.Int32
	rate                                 *array.Float64
	warmup                               *array.Boolean
	sched, sent, end, firstTok, firstCon *array.Int64
	gaps                                 *array.List
	gapValues                            []int32
	err                                  error
}

func (c *batchCols) load(rec arrow.Record, cols map[string]int, all bool) {
	get := func(dst any, name string) {
		if c.err != nil {
			return
		}
		switch d := dst.(type) {
		case **array.String:
			*d, c.err = column[*array.String](rec, cols, name)
		case **array.Int32:
			*d, c.err = column[*array.Int32](rec, cols, name)
		case **array.Int64:
			*d, c.err = column[*array.Int64](rec, cols, name)
		case **array.Float64:
			*d, c.err = column[*array.Float64](rec, cols, name)
		case **array.Boolean:
			*d, c.err = column[*array.Boolean](rec, cols, name)
		case **array.List:
			*d, c.err = column[*array.List](rec, cols, name)
		}
	}
	get(&c.runID, colRunID)
	get(&c.level, colLevel)
	get(&c.concurrency, colConcurrency)
	get(&c.rate, colRate)
	get(&c.worker, colWorker)
	get(&c.warmup, colWarmup)
	get(&c.sched, colScheduledNs)
	get(&c.sent, colSentNs)
	get(&c.end, colEndNs)
	if !all {
		return
	}
	get(&c.firstTok, colFirstTokenNs)
	get(&c.firstCon, colFirstContentNs)
	get(&c.gaps, colChunkGapsUs)
	get(&c.promptTokens, colPromptTokens)
	get(&c.outputTokens, colOutputTokens)
	get(&c.tokensSource, colTokensSource)
	get(&c.targetPr, colTargetPrompt)
	get(&c.maxTokens, colMaxTokens)
	get(&c.status, colStatus)
	get(&c.errText, colError)
	if c.err == nil {
		v, ok := c.gaps.ListValues().(*array.Int32)
		if !ok {
			c.err = fmt.Errorf("column %s has elements of type %s", colChunkGapsUs, c.gaps.ListValues().DataType())
			return
		}
		c.gapValues = v.Int32Values()
	}
}

// levelAcc accumulates the statistics of one level in the second pass.
type levelAcc struct {
	w        *windowAcc
	ws, we   int64 // steady-state window
	steady   bool
	requests int
	errors   int
	kinds    map[string]int
	groups   errorGroups
	// The per-request values, spilled as the pass reads them (spill.go); load
	// reads a level's back, sorted, into the slices below, and release drops them.
	ttftCol, ttfcCol, e2eCol  spillCol[int64]
	tpotCol, perUserCol       spillCol[float64]
	lagsCol                   spillCol[int64]
	ttftSchedCol, e2eSchedCol spillCol[int64]
	ttft, ttfc                []int64
	e2e                       []int64
	tpot, perUser             []float64
	itl                       gapHist
	outTokens                 int64
	promptSum                 int64
	promptN                   int
	winTokens                 float64
	winDone                   int
	good                      int
	decodeNs                  float64
	waitNs                    float64
	usageRows                 int // successful rows with usage token counts
	chunkRows                 int // successful rows whose tokens were counted from chunks
	exactRows                 int // usage rows with exactly one token per chunk
	moreChunks                int // usage rows with >2% more chunks than tokens
	fewerChunks               int // usage rows with >2% fewer chunks than tokens
	usageTokens               int64
	usageChunks               int64
	lags                      []int64 // open loop: sent − scheduled
	// ttftSched and e2eSched are the open-loop latencies of successful requests
	// measured from the scheduled send (corrected for coordinated omission).
	ttftSched, e2eSched []int64
	// resampled is the level's bootstrap, drawn while its values are loaded
	// (nil when the bootstrap is off).
	resampled       *levelResamples
	every, seen     int
	timeline        []TimelineRequest
	timelineThinned bool
	bins            binAcc // the window in time bins, for the bootstrap
}

// runAcc accumulates one run (one run_id of one source).
type runAcc struct {
	id     string
	levels map[int32]*levelAcc
	work   intCounts // prompt+output tokens per successful non-warm-up request
}

// statsPass is the second pass over one source.
type statsPass struct {
	slo      SLO
	wins     map[levelKey]*windowAcc
	runs     map[string]*runAcc
	excluded exclusions // the rows only this pass excludes
	spill    *spillDir  // where per-request values spill (nil: kept in memory)
}

// newStatsPass is the pass over levels windowed by wins. With spill nil the
// per-request values stay in memory.
func newStatsPass(slo SLO, wins map[levelKey]*windowAcc) *statsPass {
	return &statsPass{slo: slo, wins: wins, runs: map[string]*runAcc{}, excluded: exclusions{}}
}

func (p *statsPass) level(k levelKey) *levelAcc {
	r := p.runs[k.run]
	if r == nil {
		r = &runAcc{id: k.run, levels: map[int32]*levelAcc{}}
		p.runs[k.run] = r
	}
	l := r.levels[k.level]
	if l == nil {
		w := p.wins[k]
		if w == nil { // cannot happen: pass 1 saw the same rows
			w = &windowAcc{workers: map[int32]*[2]int64{}}
		}
		l = &levelAcc{w: w, kinds: map[string]int{}}
		for _, c := range []*spillCol[int64]{&l.ttftCol, &l.ttfcCol, &l.e2eCol, &l.lagsCol, &l.ttftSchedCol, &l.e2eSchedCol} {
			c.dir = p.spill
		}
		l.tpotCol.dir, l.perUserCol.dir = p.spill, p.spill
		l.ws, l.we, l.steady = w.window()
		l.bins.init(l.ws, l.we)
		l.every = max(1, (w.n+timelineMax-1)/timelineMax)
		l.timelineThinned = l.every > 1
		r.levels[k.level] = l
	}
	return l
}

func (p *statsPass) batch(rec arrow.Record, cols map[string]int) error {
	var c batchCols
	c.load(rec, cols, true)
	if c.err != nil {
		return c.err
	}
	var key levelKey
	var l *levelAcc
	var run *runAcc
	for i := 0; i < int(rec.NumRows()); i++ {
		if c.warmup.Value(i) {
			continue
		}
		k := levelKey{c.runID.Value(i), c.level.Value(i)}
		if l == nil || k != key {
			key = levelKey{strings.Clone(k.run), k.level}
			w := p.wins[key]
			if w == nil || impossibleWindowRow(&c, i, w) != "" {
				l = nil // excluded by the window pass (which counted it)
				continue
			}
			l = p.level(key)
			run = p.runs[key.run]
		}
		if impossibleWindowRow(&c, i, l.w) != "" {
			continue // excluded by the window pass (which counted it)
		}
		if why := impossibleStatsRow(&c, i); why != "" {
			p.excluded.add(key, why)
			continue
		}
		p.row(&c, i, l, run)
	}
	return nil
}

// row accumulates one non-warm-up row.
func (p *statsPass) row(c *batchCols, i int, l *levelAcc, run *runAcc) {
	l.requests++
	sent, end := c.sent.Value(i), c.end.Value(i)
	hasTok := c.firstTok.IsValid(i)
	var ft int64
	if hasTok {
		ft = c.firstTok.Value(i)
	}
	status := c.status.Value(i)
	errText := ""
	if c.errText.IsValid(i) {
		errText = c.errText.Value(i)
	}
	ok := status >= 200 && status < 300 && errText == "" && hasTok
	if l.w.rate > 0 {
		l.lagsCol.add(sent - c.sched.Value(i))
	}

	// Occupancy (Little's law) counts every attempt while it is in flight: waiting
	// from send to first token (or to failure), decoding from first token to end.
	if hasTok {
		l.waitNs += overlap(sent, ft, l.ws, l.we)
		l.decodeNs += overlap(ft, end, l.ws, l.we)
	} else {
		l.waitNs += overlap(sent, end, l.ws, l.we)
	}
	l.bins.occupancy(sent, ft, end, hasTok)

	l.seen++
	if (l.seen-1)%l.every == 0 {
		base := l.w.firstSent
		tr := TimelineRequest{
			Worker: int(c.worker.Value(i)),
			Sent:   float64(sent-base) / 1e9,
			End:    float64(end-base) / 1e9,
			Error:  !ok,
		}
		if hasTok {
			tr.FirstToken = ptr(float64(ft-base) / 1e9)
		}
		l.timeline = append(l.timeline, tr)
	}

	if !ok {
		l.errors++
		kind := errorKind(status, errText, hasTok)
		l.kinds[kind]++
		l.groups.add(kind, errText)
		return
	}

	var gaps []int32
	if c.gaps.IsValid(i) {
		s, e := c.gaps.ValueOffsets(i)
		gaps = c.gapValues[s:e]
	}
	chunks := len(gaps) + 1
	usage := c.outputTokens.IsValid(i) && c.tokensSource.Value(i) == "usage"
	out := int64(chunks)
	if c.outputTokens.IsValid(i) {
		out = int64(c.outputTokens.Value(i))
	}
	if usage {
		l.usageRows++
		l.usageTokens += out
		l.usageChunks += int64(chunks)
		d := float64(out) * 0.02
		switch {
		case out == int64(chunks):
			l.exactRows++
		case float64(int64(chunks)-out) > d:
			l.moreChunks++
		case float64(out-int64(chunks)) > d:
			l.fewerChunks++
		}
	} else {
		l.chunkRows++
	}

	ttft, e2e := ft-sent, end-sent
	l.ttftCol.add(ttft)
	l.e2eCol.add(e2e)
	if l.w.rate > 0 {
		sched := c.sched.Value(i)
		l.ttftSchedCol.add(ft - sched)
		l.e2eSchedCol.add(end - sched)
	}
	if c.firstCon.IsValid(i) {
		l.ttfcCol.add(c.firstCon.Value(i) - sent)
	}
	var tpot float64 // vLLM: a request of ≤ 1 token counts as TPOT 0 for goodput
	if out > 1 {
		tpot = float64(e2e-ttft) / 1e9 / float64(out-1)
		l.tpotCol.add(tpot)
	}
	if e2e > ttft && out > 0 {
		l.perUserCol.add(float64(out) / (float64(e2e-ttft) / 1e9))
	}
	l.outTokens += out
	l.bins.success(ft, end, gaps, out)
	prompt := int64(c.targetPr.Value(i))
	if c.promptTokens.IsValid(i) {
		prompt = int64(c.promptTokens.Value(i))
		l.promptSum += prompt
		l.promptN++
	}
	run.work.add(prompt + out)

	// Pooled gaps, and the chunk arrival times for the window.
	l.itl.addAll(gaps)
	var gapSum int64
	for _, g := range gaps {
		gapSum += int64(g)
	}
	last := ft + gapSum*1000
	switch {
	case ft >= l.ws && last <= l.we:
		l.winTokens += float64(out)
	case last < l.ws || ft > l.we:
	default:
		in := 0
		t := ft
		if t >= l.ws && t <= l.we {
			in++
		}
		for _, g := range gaps {
			t += int64(g) * 1000
			if t >= l.ws && t <= l.we {
				in++
			}
		}
		// Usage tokens are spread over the chunks in proportion when the server
		// sends several tokens per chunk.
		l.winTokens += float64(out) * float64(in) / float64(chunks)
	}
	if end >= l.ws && end <= l.we {
		l.winDone++
		if p.meetsSLO(ttft, tpot, e2e) {
			l.good++
		}
	}
}

func (p *statsPass) meetsSLO(ttft int64, tpot float64, e2e int64) bool {
	s := p.slo
	if s.TTFT != nil && float64(ttft)/1e9 > *s.TTFT {
		return false
	}
	if s.TPOT != nil && tpot > *s.TPOT {
		return false
	}
	if s.E2E != nil && float64(e2e)/1e9 > *s.E2E {
		return false
	}
	return true
}

// overlap is the length of [a, b] ∩ [ws, we] in nanoseconds.
func overlap(a, b, ws, we int64) float64 {
	lo, hi := max(a, ws), min(b, we)
	if hi <= lo {
		return 0
	}
	return float64(hi - lo)
}

// hasSLO reports whether any latency target is set.
func (s SLO) hasSLO() bool { return s.TTFT != nil || s.TPOT != nil || s.E2E != nil }

// load reads the level's spilled per-request values back, sorted, for finish,
// warnings and the bootstrap; release drops them again, so that only one level's
// values are in memory at a time.
func (l *levelAcc) load() error {
	var err error
	ints := []struct {
		col *spillCol[int64]
		dst *[]int64
	}{{&l.ttftCol, &l.ttft}, {&l.ttfcCol, &l.ttfc}, {&l.e2eCol, &l.e2e}, {&l.lagsCol, &l.lags},
		{&l.ttftSchedCol, &l.ttftSched}, {&l.e2eSchedCol, &l.e2eSched}}
	for _, c := range ints {
		if *c.dst, err = c.col.sorted(); err != nil {
			return err
		}
	}
	if l.tpot, err = l.tpotCol.sorted(); err != nil {
		return err
	}
	l.perUser, err = l.perUserCol.sorted()
	return err
}

func (l *levelAcc) release() {
	l.ttft, l.ttfc, l.e2e, l.lags, l.ttftSched, l.e2eSched = nil, nil, nil, nil, nil, nil
	l.tpot, l.perUser = nil, nil
}

// finish turns the accumulated level into its statistics.
func (l *levelAcc) finish(level int32, slo SLO, tail []float64) Level {
	w := l.w
	out := Level{
		Level:       int(level),
		Concurrency: int(w.concurrency),
		Rate:        w.rate,
		Requests:    l.requests,
		Errors:      l.errors,
	}
	if len(l.kinds) > 0 {
		out.ErrorKinds = l.kinds
	}
	out.ErrorGroups = l.groups.list()
	win := float64(l.we-l.ws) / 1e9
	out.WindowS = win
	out.WindowStartS = float64(l.ws-w.firstSent) / 1e9
	out.WindowEndS = float64(l.we-w.firstSent) / 1e9
	out.WindowCompletions = l.winDone
	out.winStartNs, out.winEndNs = l.ws, l.we
	if win > 0 {
		out.OutputTokS = l.winTokens / win
		out.RequestS = float64(l.winDone) / win
		out.DecodeConcurrency = l.decodeNs / 1e9 / win
		out.WaitingConcurrency = l.waitNs / 1e9 / win
		if slo.hasSLO() {
			out.GoodputRequestS = ptr(float64(l.good) / win)
		}
	}
	if span := float64(w.lastEnd-w.firstSent) / 1e9; span > 0 {
		out.NaiveOutputTokS = float64(l.outTokens) / span
		out.NaiveRequestS = float64(l.requests-l.errors) / span
	}
	out.LevelOutputTokens = l.outTokens
	out.WindowOutputTokens = l.winTokens
	out.OutputTokens = l.outTokens
	if l.promptN > 0 {
		out.MeanPromptTokens = float64(l.promptSum) / float64(l.promptN)
	}
	if n := l.requests - l.errors; n > 0 {
		out.MeanOutputTokens = float64(l.outTokens) / float64(n)
	}
	if len(l.perUser) > 0 {
		out.PerUserTokS = percentileSorted(l.perUser, 50)
	}
	out.TTFT = summarizeNs(l.ttft)
	out.TTFC = summarizeNs(l.ttfc)
	out.E2E = summarizeNs(l.e2e)
	out.TPOT = summarize(l.tpot)
	out.ITL = l.itl.summary()
	// The tail percentiles, each with its sample-size guard (stats_tail.go); the
	// slices are sorted by the summaries above.
	out.TTFT.Tail = tailNs(l.ttft, tail, "requests")
	out.E2E.Tail = tailNs(l.e2e, tail, "requests")
	out.TPOT.Tail = tailFloat(l.tpot, tail, "requests")
	out.ITL.Tail = l.itl.tail(tail)
	if w.rate > 0 {
		ttftCO := summarizeNs(l.ttftSched)
		ttftCO.Tail = tailNs(l.ttftSched, tail, "requests")
		out.TTFTFromScheduled = &ttftCO
		e2eCO := summarizeNs(l.e2eSched)
		e2eCO.Tail = tailNs(l.e2eSched, tail, "requests")
		out.E2EFromScheduled = &e2eCO
	}
	out.ITLHistogram = l.itl.histogram()
	return out
}

// warnings are the data-quality warnings of one level. The rules:
//   - errors: more than 1% of the level's attempts failed (listed by kind);
//   - usage missing: any successful request whose tokens were counted from chunks;
//   - token counts disagreeing (per request, by more than 2% of the usage count):
//     more chunks than usage tokens is always wrong, since a token chunk carries at
//     least one token; fewer chunks than tokens is normal for servers that send
//     several tokens per chunk, so it is only flagged when the server otherwise
//     streams one token per chunk (at least 4 in 5 requests match exactly): then the
//     missing chunks were lost or merged on the way and ITL is inflated. A server
//     that sends more than 1.5 tokens per chunk on average gets a note that ITL is
//     per chunk;
//   - client lag in open loop: send lag p99 above 10 ms or above 1% of the arrival
//     interval;
//   - client CPU: the recorder's LevelInfo.client_cpu_util above 0.8;
//   - no steady state: the workers were never all busy at once.
func (l *levelAcc) warnings(lv Level, meta *levelMeta) []string {
	var ws []string
	name := levelName(lv)
	if lv.Requests > 0 && float64(lv.Errors) > 0.01*float64(lv.Requests) {
		ws = append(ws, fmt.Sprintf("%s: %d of %d requests failed (%.1f%%): %s", name, lv.Errors, lv.Requests,
			100*float64(lv.Errors)/float64(lv.Requests), kindList(lv.ErrorKinds)+topMessage(lv)))
	}
	if !l.steady && l.requests > 1 {
		ws = append(ws, fmt.Sprintf("%s: no steady state (the workers were never all busy at once); throughput uses the whole level", name))
	}
	if l.chunkRows > 0 {
		ws = append(ws, fmt.Sprintf("%s: usage missing for %d of %d requests: output tokens were counted from chunks, which undercounts servers that send several tokens per chunk (enable stream_options.include_usage)",
			name, l.chunkRows, l.chunkRows+l.usageRows))
	}
	if l.moreChunks > 0 {
		ws = append(ws, fmt.Sprintf("%s: %d requests received more token chunks than their usage tokens (by more than 2%%): every token chunk carries at least one token, so the usage under-reports or chunks were miscounted",
			name, l.moreChunks))
	}
	if l.usageRows > 0 && float64(l.exactRows) >= 0.8*float64(l.usageRows) && l.fewerChunks > 0 {
		ws = append(ws, fmt.Sprintf("%s: %d requests received more than 2%% fewer chunks than usage tokens although this server streams one token per chunk: chunks were lost or merged on the way, and ITL is inflated",
			name, l.fewerChunks))
	}
	if l.usageChunks > 0 && float64(l.usageTokens) > 1.5*float64(l.usageChunks) {
		ws = append(ws, fmt.Sprintf("%s: the server sends %.1f tokens per chunk on average: ITL is per chunk, not per token (compare TPOT)",
			name, float64(l.usageTokens)/float64(l.usageChunks)))
	}
	if lv.Rate > 0 {
		lag := meta.lagP99(l.lags)
		interval := 1 / lv.Rate
		if lag > 0.010 || lag > 0.01*interval {
			ws = append(ws, fmt.Sprintf("%s: the client sent late: send lag p99 %.1f ms (arrival interval %.1f ms); the offered rate was not what was asked for",
				name, lag*1e3, interval*1e3))
		}
	}
	if meta != nil && meta.ClientCPUUtil > 0.8 {
		ws = append(ws, fmt.Sprintf("%s: client CPU at %.0f%%: the recorder, not the server, may have been the limit",
			name, 100*meta.ClientCPUUtil))
	}
	return ws
}

// lagP99 is the p99 send lag of a rate level in seconds: measured from the rows,
// or the recorder's own figure when the rows have none.
func (m *levelMeta) lagP99(lags []int64) float64 {
	if len(lags) > 0 {
		s := summarizeNs(lags)
		return *s.P99
	}
	if m != nil {
		return m.SendLagP99S
	}
	return 0
}

func levelName(lv Level) string {
	if lv.Rate > 0 {
		return fmt.Sprintf("level %d (rate %g/s)", lv.Level, lv.Rate)
	}
	return fmt.Sprintf("level %d (concurrency %d)", lv.Level, lv.Concurrency)
}

func kindList(kinds map[string]int) string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if kinds[names[i]] != kinds[names[j]] {
			return kinds[names[i]] > kinds[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, kinds[n])
	}
	return strings.Join(parts, ", ")
}
