package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/trace"
)

// metricPointsMax is the most points kept per server metric series for plotting.
const metricPointsMax = 1000

// Analyze opens each trace (a trace file or a RUN.parts directory) and analyzes it.
// A trace holding several runs (concatenated traces, told apart by run_id) gives
// one Run each. Other tools' result files are imported first (package importer)
// and given to AnalyzeSources.
func Analyze(ctx context.Context, names []string, opt Options) (*Analysis, error) {
	if len(names) == 0 {
		return nil, errors.New("analyze: no trace given")
	}
	srcs := make([]*trace.Source, 0, len(names))
	for _, name := range names {
		open := trace.Open
		if opt.IgnoreCorrupt {
			open = trace.OpenSalvage
		}
		src, err := open(name)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
	}
	return AnalyzeSources(ctx, srcs, opt)
}

// AnalyzeSources analyzes traces already opened: from disk (trace.Open) or images
// in memory (trace.OpenImage).
func AnalyzeSources(ctx context.Context, srcs []*trace.Source, opt Options) (*Analysis, error) {
	if len(srcs) == 0 {
		return nil, errors.New("analyze: no trace given")
	}
	if err := opt.Prepare(); err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", srcs[0].Name, err)
	}
	a := &Analysis{Schema: Schema, Runs: []Run{}}
	for _, ts := range srcs {
		runs, err := analyzeSource(ctx, newSource(ts), opt)
		// A part found corrupt while its rows were read: with --ignore-corrupt the
		// source is analyzed again without it (what was read of it is discarded).
		var ce *corruptFileError
		for errors.As(err, &ce) && ts.Salvage() && len(ts.Files) > 1 {
			ts.Drop(ce.file, ce.err)
			runs, err = analyzeSource(ctx, newSource(ts), opt)
		}
		if err != nil {
			return nil, err
		}
		a.Runs = append(a.Runs, runs...)
	}
	return a, nil
}

// corruptFileError is a file of a source found corrupt (trace.ErrCorrupt) while
// its rows were read.
type corruptFileError struct {
	file trace.File
	err  error
}

func (e *corruptFileError) Error() string { return e.err.Error() }
func (e *corruptFileError) Unwrap() error { return e.err }

// scanFile scans f, marking a corrupt file as such.
func scanFile(ctx context.Context, f trace.File, want []colSpec, fn batchFunc) error {
	err := scanTrace(ctx, f, want, fn)
	if errors.Is(err, trace.ErrCorrupt) {
		return &corruptFileError{file: f, err: err}
	}
	return err
}

// analyzeSource runs both passes over one source and assembles its runs.
func analyzeSource(ctx context.Context, src *source, opt Options) (runs []Run, err error) {
	spill := &spillDir{chunk: opt.spillChunk}
	defer func() {
		if cerr := spill.close(); cerr != nil && err == nil {
			err = fmt.Errorf("analyzing %s: removing the per-request values: %w", src.name, cerr)
		}
	}()
	// The run is judged by the criteria its recording stored unless the
	// analysis was given its own; the statistics pass needs the SLOs.
	opt, crit := runCriteria(opt, src.meta.Plan)
	wp := newWindowPass()
	for _, f := range src.files {
		if err := scanFile(ctx, f, windowColumns(), wp.batch); err != nil {
			return nil, err
		}
	}
	for k, e := range wp.excluded {
		if wp.levels[k] == nil {
			return nil, fmt.Errorf("reading %s: level %d of run %s is impossible as a whole: every one of its %d rows breaks an invariant (the first: %s)", src.name, k.level, k.run, e.n, e.first)
		}
	}
	sp := newStatsPass(opt.SLO, wp.levels)
	sp.spill = spill
	wlp := newWorkloadPass(spill)
	for _, f := range src.files {
		if err := scanFile(ctx, f, statsColumns(), sp.batch); err != nil {
			return nil, err
		}
		if err := wlp.scan(ctx, f); err != nil {
			if errors.Is(err, trace.ErrCorrupt) {
				return nil, &corruptFileError{file: f, err: err}
			}
			return nil, err
		}
	}
	if spill.err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", src.name, spill.err)
	}

	var sidecars []sidecarPoints
	var metricsErrs []string
	for _, f := range src.sidecars {
		m, err := loadMetrics(ctx, f, opt.sidecarSamples)
		if err != nil {
			metricsErrs = append(metricsErrs, fmt.Sprintf("server metrics not read: %v", err))
			continue
		}
		sidecars = append(sidecars, m)
	}

	ids := wp.runs
	if len(ids) == 0 {
		ids = []string{src.meta.RunID}
	}
	for _, id := range ids {
		acc := sp.runs[id]
		if acc == nil {
			acc = &runAcc{id: id, levels: map[int32]*levelAcc{}}
		}
		// The file metadata describes the run it was written for; other runs
		// concatenated into the same file get only their rows.
		own := id == src.meta.RunID || len(ids) == 1
		r, err := buildRun(src, acc, own, opt, crit)
		if err != nil {
			return nil, err
		}
		if err := wlp.attach(r); err != nil {
			return nil, fmt.Errorf("analyzing %s: %w", src.name, err)
		}
		r.Warnings = append(r.Warnings, wp.excluded.warnings(id)...)
		r.Warnings = append(r.Warnings, sp.excluded.warnings(id)...)
		r.Warnings = append(r.Warnings, prefixCacheWarnings(r.Levels, src.meta.Plan, own && src.meta.Source == nil)...)
		if own {
			replayPrefixEvidence(r, src.meta.ReplayPrefix)
		}
		r.Warnings = append(r.Warnings, wlp.lengthShiftWarnings(r)...)
		var snaps []timedSnapshot
		if own {
			m, counters, ws := attachMetrics(sidecars, id, src.span(wp, id))
			r.Metrics = thinMetrics(m, src.meta.Started.UnixNano(), levelWindows(acc))
			r.Warnings = append(r.Warnings, src.warnings...)
			r.Warnings = append(r.Warnings, metricsErrs...)
			r.Warnings = append(r.Warnings, ws...)
			snaps = snapshots(counters)
			r.Warnings = append(r.Warnings, refusedDeclared(snaps)...)
			attachServerCounters(r, snaps)
			attachGPU(r, runGPUSamples(sidecars, id))
			energyDecision(r, opt)
		}
		serverVerdict(r, snaps, opt)
		tierVerdict(r)
		runs = append(runs, *r)
	}
	return runs, nil
}

// buildRun turns one run's accumulators into its Run: levels, data warnings, then
// the capacity model, fits and ceilings (modelRun), then the timeline.
func buildRun(src *source, acc *runAcc, own bool, opt Options, crit *Criteria) (*Run, error) {
	r := &Run{RunID: acc.id, Source: src.name, Levels: []Level{}, Warnings: []string{}, SLO: opt.SLO, Criteria: crit}
	var facts serverFacts
	metaLevels := map[int]*levelMeta{}
	if own {
		r.Model = src.meta.Target.Model
		r.Info = src.rawMeta
		r.Server = src.meta.Server
		var sm serverMeta
		if len(src.meta.Server) > 0 {
			if err := json.Unmarshal(src.meta.Server, &sm); err != nil {
				return nil, fmt.Errorf("reading %s: decoding the server facts: %w", src.name, err)
			}
		}
		facts = serverFacts{Kind: sm.Kind, KVCapacityTokens: sm.KVCapacityTokens, MaxModelLen: sm.MaxModelLen, Slots: sm.Slots,
			NCtx: sm.NCtx, NumGPUBlocks: sm.NumGPUBlocks, BlockSize: sm.BlockSize}
		r.Warnings = append(r.Warnings, checkServerFacts(&facts)...)
		for i := range src.meta.Levels {
			metaLevels[src.meta.Levels[i].Level] = &src.meta.Levels[i]
		}
		r.Search = searchPath(src.meta.RunInfo, src.meta.Levels)
	}
	if len(r.Server) == 0 {
		r.Server = json.RawMessage("null")
	}

	keys := make([]int32, 0, len(acc.levels))
	for k := range acc.levels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		l := acc.levels[k]
		// One level's per-request values are in memory at a time: everything that
		// reads them (summaries, warnings, the bootstrap's draws) runs here.
		if err := l.load(); err != nil {
			return nil, fmt.Errorf("analyzing %s: level %d: %w", src.name, k, err)
		}
		lv := l.finish(k, opt.SLO, tailPercentiles(opt.Percentiles))
		sourceLevel(&lv, metaLevels[int(k)])
		if m := metaLevels[int(k)]; m != nil {
			lv.Repeat, lv.StopReason = m.Repeat, m.StopReason
		}
		checkValidity(&lv)
		if own && src.meta.Source == nil {
			// Another tool's import has no plan of ceiling's to disagree with.
			if why := planDisagreement(src.meta.Plan, lv, metaLevels[int(k)]); why != "" {
				lv.Valid = false
				lv.InvalidReason = strings.TrimPrefix(lv.InvalidReason+"; "+planDisagreementReason+why, "; ")
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s disagrees with the run's plan (%s): it is shown but makes no ceiling", levelName(lv), why))
			}
		}
		r.Levels = append(r.Levels, lv)
		r.Warnings = append(r.Warnings, l.warnings(lv, metaLevels[int(k)])...)
		if opt.Resamples >= 0 {
			l.resampled = resampleLevel(l, lv, resampleCount(opt))
		}
		l.release()
	}
	if len(r.Levels) == 0 {
		r.Warnings = append(r.Warnings, "the trace holds no measured (non-warm-up) requests")
	}
	if own {
		// What the recorder did not believe of the server's answers, and what
		// ceiling merge noticed about how the shards ran together, are stored in
		// the run info: they belong to the verdict's caveats.
		r.Warnings = append(r.Warnings, src.meta.Warnings...)
		r.Warnings = append(r.Warnings, sourceWarnings(src.meta.Source)...)
		if len(src.meta.Levels) > 0 {
			// A trace without level records (another tool's) has nothing to compare.
			r.Warnings = append(r.Warnings, levelConsistency(src.meta.Levels, r.Levels, src.meta.Source == nil)...)
		}
	}
	tool := ""
	if own && src.meta.Source != nil {
		tool = src.meta.Source.Tool
	}
	if w := validityWarning(r.Levels, planSizing(src.meta.Plan, own && src.meta.Source == nil), tool); w != "" {
		r.Warnings = append(r.Warnings, w)
	}

	var work workloadTokens
	if acc.work.len() > 0 {
		work = workloadTokens{Mean: acc.work.mean(), P99: acc.work.percentile(99)}
	}
	levelIntervals(r, acc, opt)
	if err := modelRun(r, facts, work, opt); err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", src.name, err)
	}
	bootstrapRun(r, acc, opt)
	dropEmptyIntervals(r)
	if r.Warnings == nil {
		r.Warnings = []string{}
	}

	if k, ok := timelineLevel(r, opt.TimelineLevel); ok && metaLevels[int(k)] != nil && metaLevels[int(k)].Timing == "relative" {
		// No send times: a timeline would draw every request starting at once.
		r.Warnings = append(r.Warnings, fmt.Sprintf("no per-request timeline: level %d has no send times", k))
	} else if ok {
		l := acc.levels[k]
		tl := &Timeline{Level: int(k), Total: l.requests, Thinned: l.timelineThinned, Requests: l.timeline}
		sort.SliceStable(tl.Requests, func(i, j int) bool { return tl.Requests[i].Sent < tl.Requests[j].Sent })
		if tl.Requests == nil {
			tl.Requests = []TimelineRequest{}
		}
		r.Timeline = tl
	} else if opt.TimelineLevel >= 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no level %d to draw on the timeline", opt.TimelineLevel))
	}
	return r, nil
}

// timelineLevel picks the level drawn on the timeline: the one asked for, else the
// one whose concurrency is nearest the realistic ceiling, else the one with the
// highest windowed throughput.
func timelineLevel(r *Run, want int) (int32, bool) {
	if len(r.Levels) == 0 {
		return 0, false
	}
	if want >= 0 {
		for _, l := range r.Levels {
			if l.Level == want {
				return int32(want), true
			}
		}
		return 0, false
	}
	best := r.Levels[0]
	if c := r.Ceiling.Concurrency; c != nil {
		for _, l := range r.Levels[1:] {
			if math.Abs(float64(l.Concurrency)-*c) < math.Abs(float64(best.Concurrency)-*c) {
				best = l
			}
		}
		return int32(best.Level), true
	}
	for _, l := range r.Levels[1:] {
		if l.OutputTokS > best.OutputTokS {
			best = l
		}
	}
	return int32(best.Level), true
}

// thinMetrics turns the sidecar's selected series into plot series: gauges as they
// are, counters as per-second rates between scrapes, times in seconds from start
// (the run's start, or the first scrape), at most metricPointsMax points each.
// Each series also gets its aggregates inside the levels' steady-state windows.
func thinMetrics(m map[[2]string][]metricPoint, startNs int64, windows []levelWindow) []MetricSeries {
	if len(m) == 0 {
		return nil
	}
	if startNs <= 0 {
		startNs = math.MaxInt64
		for _, pts := range m {
			for _, p := range pts {
				startNs = min(startNs, p.ts)
			}
		}
	}
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var out []MetricSeries
	for _, k := range keys {
		pts := m[k]
		sort.Slice(pts, func(i, j int) bool { return pts[i].ts < pts[j].ts })
		s := MetricSeries{Name: k[0], Labels: k[1]}
		var series [][2]float64
		if metricKind(k[0]) == "counter" {
			s.Name = "rate(" + k[0] + ")"
			for i := 1; i < len(pts); i++ {
				dt := float64(pts[i].ts-pts[i-1].ts) / 1e9
				dv := pts[i].value - pts[i-1].value
				if dt <= 0 || dv < 0 { // same scrape, or a counter reset
					continue
				}
				series = append(series, [2]float64{float64(pts[i].ts-startNs) / 1e9, dv / dt})
			}
		} else {
			for _, p := range pts {
				series = append(series, [2]float64{float64(p.ts-startNs) / 1e9, p.value})
			}
		}
		if len(series) == 0 {
			continue
		}
		s.Levels = metricLevels(series, windows, startNs)
		if every := (len(series) + metricPointsMax - 1) / metricPointsMax; every > 1 {
			thin := series[:0]
			for i := 0; i < len(series); i += every {
				thin = append(thin, series[i])
			}
			series = thin
		}
		s.Points = series
		out = append(out, s)
	}
	return out
}
