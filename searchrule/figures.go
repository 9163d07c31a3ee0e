package searchrule

import "context"

// Figures are the analysed figures of one level that the criteria read: the same
// figures the analysis and the report show for it, so that the search's verdict
// and the analysis agree.
type Figures struct {
	Level       int     // the level's index in the run
	Concurrency int     // closed loop: the concurrency it ran at
	Rate        float64 // open loop: the offered requests/s

	Requests, Errors int
	ErrorKinds       map[string]int // failed requests by kind ("http_503", "kv_cache_full")

	RequestS        float64  // completed requests/s
	GoodputRequestS *float64 // requests/s that met every latency SLO; nil: no SLO given
	OutputTokS      float64  // output tokens/s
	// OutputTokSRelSE is the output throughput's relative standard error (0:
	// unknown); the search's knee reads it.
	OutputTokSRelSE float64

	Valid         bool   // the level measured what it is labelled with (package levelrule)
	InvalidReason string // why not

	// Tails are the latency percentiles the criteria asked for.
	Tails []Tail
	// Server holds the server's own counters over the level; nil: not scraped.
	Server *ServerFigures
}

// Tail is one latency percentile of a level.
type Tail struct {
	Metric string   // ttft, tpot, itl, e2e
	P      float64  // the percentile (95 = p95)
	N      int      // the values it is computed from: requests, or gaps for itl
	Value  *float64 // seconds; nil: not measured (Note says why)
	Note   string
}

// ServerFigures are the server's counters over a level, where it exposes them.
type ServerFigures struct {
	Preemptions *float64 // requests preempted or retracted during the level
	KVUsageMean *float64 // mean KV-cache usage, a share
	KVUsageMax  *float64
	RunningMax  *float64 // the most requests the server ran at once
	WaitingMean *float64 // the mean of requests waiting in its queue
}

// Analyzer computes the figures of a run's levels from the sealed parts in dir,
// keyed by level index, with the latency percentiles and SLO targets the
// criteria name. The command line builds it from package analyze.
type Analyzer func(ctx context.Context, dir, runID string, criteria []Criterion) (map[int]Figures, error)

// tail is the level's figure for metric at percentile p; ok is false when the
// analyzer was not asked for it.
func (f Figures) tail(metric string, p float64) (Tail, bool) {
	for _, t := range f.Tails {
		if t.Metric == metric && t.P == p {
			return t, true
		}
	}
	return Tail{}, false
}
