package analyze

import (
	"context"

	"github.com/ceiling-llm/ceiling/searchrule"
)

// SearchFigures is the searchrule.Analyzer the command line hands the recorder:
// it analyses the sealed parts in dir and returns the figures of run runID's
// levels, by index, that criteria read. The search thus judges each level on the
// analysis's own figures, and the recorder does not import this package.
func SearchFigures(ctx context.Context, dir, runID string, criteria []searchrule.Criterion) (map[int]searchrule.Figures, error) {
	a, err := Analyze(ctx, []string{dir}, searchOptions(criteria))
	if err != nil {
		return nil, err
	}
	out := map[int]searchrule.Figures{}
	for _, run := range a.Runs {
		if run.RunID != runID {
			continue
		}
		for _, l := range run.Levels {
			out[l.Level] = searchFiguresOf(l, criteria)
		}
	}
	return out, nil
}

// searchOptions are the analysis options the criteria need: the latency targets
// for goodput, the percentiles asked, the bootstrap (the knee reads each level's
// throughput interval, as the analysis's does); the knee is the search's own.
func searchOptions(criteria []searchrule.Criterion) Options {
	opt := Options{TimelineLevel: -1, Knee: -1}
	for _, c := range criteria {
		if c.Kind != "latency" {
			continue
		}
		opt.Percentiles = append(opt.Percentiles, c.P)
		v := c.Limit
		// Only the target, for goodput: the criterion itself reads its own
		// percentile from the level (searchFiguresOf).
		target, _, ok := opt.SLO.fields(c.Metric)
		if !ok {
			continue
		}
		if *target == nil || v < **target {
			*target = &v
		}
	}
	return opt
}

// searchFiguresOf copies what the criteria read from an analysed level.
func searchFiguresOf(l Level, criteria []searchrule.Criterion) searchrule.Figures {
	f := searchrule.Figures{
		Level: l.Level, Concurrency: l.Concurrency, Rate: l.Rate,
		Requests: l.Requests, Errors: l.Errors, ErrorKinds: l.ErrorKinds,
		RequestS: l.RequestS, GoodputRequestS: l.GoodputRequestS,
		OutputTokS: l.OutputTokS, OutputTokSRelSE: l.ThroughputRelSE(),
		Valid: l.Valid, InvalidReason: l.InvalidReason,
	}
	for _, c := range criteria {
		if c.Kind != "latency" {
			continue
		}
		s := latencyOf(l, c.Metric)
		v, note := s.TailValue(c.P)
		f.Tails = append(f.Tails, searchrule.Tail{Metric: c.Metric, P: c.P, N: s.N, Value: v, Note: note})
	}
	if s := l.Server; s != nil {
		f.Server = &searchrule.ServerFigures{Preemptions: s.Preemptions, KVUsageMean: s.KVUsageMean,
			KVUsageMax: s.KVUsageMax, RunningMax: s.RunningMax, WaitingMean: s.WaitingMean}
	}
	return f
}

// latencyOf is the level's latency summary of metric (ttft, tpot, itl, e2e).
func latencyOf(l Level, metric string) Summary {
	switch metric {
	case "ttft":
		return l.TTFT
	case "tpot":
		return l.TPOT
	case "itl":
		return l.ITL
	}
	return l.E2E
}
