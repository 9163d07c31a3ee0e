package analyze

import (
	"fmt"
	"sort"
	"time"
)

// Integrity: what analyze checks before it trusts that a trace, its run metadata and
// its metrics sidecar belong together. A deployment review rests on these numbers,
// so a mismatch is never silent: inputs that would hang are refused, levels the
// metadata and the rows disagree on are warned about, and a sidecar that cannot be
// shown to be the run's own is not read.

// levelConsistency compares the levels the run metadata lists as recorded with the
// measured rows the trace holds. The recorder lists a level only once its rows are
// sealed, so a listed level without rows lost them (a part that could not be
// written), and rows of an unlisted level are a level cut short (a kill or crash
// while it ran). counted says whether LevelInfo.Requests counts measured rows, as the
// recorder's does (an importer's may count warm-up rows too).
func levelConsistency(listed []levelMeta, levels []Level, counted bool) []string {
	var ws []string
	have := map[int]Level{}
	for _, l := range levels {
		have[l.Level] = l
	}
	inMeta := map[int]bool{}
	for _, m := range listed {
		inMeta[m.Level] = true
		l, ok := have[m.Level]
		name := levelName(Level{Level: m.Level, Concurrency: m.Concurrency, Rate: m.Rate})
		switch {
		case !ok:
			ws = append(ws, fmt.Sprintf("%s is listed in the run metadata as recorded (%d requests), but the trace holds no rows of it: its rows were lost (a part that could not be written?); record the level again", name, m.Requests))
		case counted && m.Requests > l.Requests:
			ws = append(ws, fmt.Sprintf("%s: the run metadata says %d measured requests, the trace holds %d: rows of the level are missing, and its statistics cover only what remains", name, m.Requests, l.Requests))
		}
	}
	for _, l := range levels {
		if !inMeta[l.Level] {
			ws = append(ws, fmt.Sprintf("%s: the trace holds %d measured rows of it, but the run metadata does not list it as recorded: the recording stopped while it ran (killed or crashed), so the level is partial", levelName(l), l.Requests))
		}
	}
	return ws
}

// runSpan is when a run could have scraped its server: from its start to its end,
// each known from the run metadata or, failing that, from the rows.
type runSpan struct {
	start, end int64 // Unix ns; 0 when unknown
}

// Slack around a run's span for its metric samples. The recorder starts scraping
// after it stamps the run's start and stops before it stamps its end, on the same
// clock, so little is needed before; after the last sealed rows a kill can leave
// samples up to one scrape later, and rows alone do not say when the run started.
const (
	spanSlackBefore     = 2 * time.Second
	spanSlackAfter      = time.Minute
	spanSlackRowsBefore = time.Minute
)

// span works out the run's span from its metadata and the first pass's levels.
func (s *source) span(wp *windowPass, id string) runSpan {
	var sp runSpan
	var firstSent, lastEnd int64
	for k, w := range wp.levels {
		if k.run != id || w.n == 0 {
			continue
		}
		if firstSent == 0 || w.firstSent < firstSent {
			firstSent = w.firstSent
		}
		lastEnd = max(lastEnd, w.lastEnd)
	}
	if t := s.meta.Started; !t.IsZero() {
		sp.start = t.UnixNano() - int64(spanSlackBefore)
	} else if firstSent != 0 {
		sp.start = firstSent - int64(spanSlackRowsBefore)
	}
	end := lastEnd
	if t := s.meta.Ended; !t.IsZero() {
		end = max(end, t.UnixNano())
	}
	for _, l := range s.meta.Levels {
		if !l.Ended.IsZero() {
			end = max(end, l.Ended.UnixNano())
		}
	}
	if end != 0 {
		sp.end = end + int64(spanSlackAfter)
	}
	return sp
}

func (sp runSpan) contains(ts int64) bool {
	return (sp.start == 0 || ts >= sp.start) && (sp.end == 0 || ts <= sp.end)
}

func (sp runSpan) String() string {
	at := func(ns int64) string {
		if ns == 0 {
			return "?"
		}
		return time.Unix(0, ns).UTC().Format(time.RFC3339)
	}
	return at(sp.start) + " to " + at(sp.end)
}

// sidecarPoints are the selected series of one metrics file, its run id and the
// number of samples read.
type sidecarPoints struct {
	path   string
	runID  string
	series map[[2]string][]metricPoint
	// counters are the server counters of every scrape, by scrape time, for
	// stats_servercounters.go.
	counters map[int64][]counterSample
	// gpu are the GPU exporters' samples (policy_energy.go).
	gpu []gpuSample
	// notes say what was left out while reading (load_metricsbound.go).
	notes []string
}

// attachMetrics decides which of the run's metrics files to use and keeps only what
// can be shown to be the run's: a file naming another run is ignored; a file naming
// no run (written before sidecars carried one) only when every sample lies inside
// the run's span; a file of the run keeps its samples inside the span. It returns
// the merged series and a warning for everything left out.
func attachMetrics(files []sidecarPoints, runID string, sp runSpan) (map[[2]string][]metricPoint, map[int64][]counterSample, []string) {
	var ws []string
	out := map[[2]string][]metricPoint{}
	counters := map[int64][]counterSample{}
	for _, f := range files {
		n, outside := 0, 0
		for _, pts := range f.series {
			for _, p := range pts {
				n++
				if !sp.contains(p.ts) {
					outside++
				}
			}
		}
		switch {
		case f.runID != "" && runID != "" && f.runID != runID:
			ws = append(ws, fmt.Sprintf("server metrics %s ignored: it belongs to run %q, not to run %q (left by an earlier recording to the same path?)", f.path, f.runID, runID))
			continue
		case f.runID == "" && outside > 0:
			ws = append(ws, fmt.Sprintf("server metrics %s ignored: it names no run and its samples are not all inside the run (%s): it may be an earlier run's", f.path, sp))
			continue
		case outside > 0 && outside == n:
			ws = append(ws, fmt.Sprintf("server metrics %s ignored: none of its %d samples lies inside the run (%s)", f.path, n, sp))
			continue
		case outside > 0:
			ws = append(ws, fmt.Sprintf("server metrics %s: %d of its %d samples lie outside the run (%s) and were left out", f.path, outside, n, sp))
		}
		ws = append(ws, f.notes...)
		for k, pts := range f.series {
			for _, p := range pts {
				if sp.contains(p.ts) {
					out[k] = append(out[k], p)
				}
			}
		}
		for ts, cs := range f.counters {
			if sp.contains(ts) {
				counters[ts] = append(counters[ts], cs...)
			}
		}
	}
	for _, pts := range out {
		sort.Slice(pts, func(i, j int) bool { return pts[i].ts < pts[j].ts })
	}
	return out, counters, ws
}
