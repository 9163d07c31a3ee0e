package analyze

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/trace"
)

// Imported runs: traces that package importer made of other benchmark tools'
// results (trace.SourceInfo in the run metadata). Importing and comparing with the
// tool's own summary happen before and after the analysis, outside this package;
// here the trace's metadata is what keeps the analysis honest about them: levels
// without send times take the tool's own duration, and what the source lacked is
// warned about.

// sourceMeta is the ceiling.run "source" object of an imported run.
type sourceMeta = trace.SourceInfo

// sourceLevel fixes the throughput of a level whose rows have relative timing
// (the tool saved no send times, every request sits at time 0 on one worker): the
// window analyze found is then [0, longest request], which is no time the server
// ran. Every figure that divides by the window is rescaled to the tool's own
// measured duration instead: output tok/s becomes output tokens / duration,
// requests/s completed / duration (vLLM's own definitions), and the occupancies
// become total time in flight / duration (Little's law over the whole level).
func sourceLevel(lv *Level, m *levelMeta) {
	if m == nil || m.Timing != "relative" || m.SourceDurationS <= 0 {
		return
	}
	d := m.SourceDurationS
	scale := 0.0
	if lv.WindowS > 0 {
		scale = lv.WindowS / d
	}
	lv.OutputTokS = float64(lv.OutputTokens) / d
	lv.NaiveOutputTokS = lv.OutputTokS
	lv.RequestS = float64(lv.Requests-lv.Errors) / d
	lv.NaiveRequestS = lv.RequestS
	lv.DecodeConcurrency *= scale
	lv.WaitingConcurrency *= scale
	if lv.GoodputRequestS != nil {
		lv.GoodputRequestS = ptr(*lv.GoodputRequestS * scale)
	}
	lv.WindowS, lv.WindowStartS, lv.WindowEndS = d, 0, d
}

// sourceWarnings are the importer's own warnings, with what it could not carry over.
func sourceWarnings(s *sourceMeta) []string {
	if s == nil {
		return nil
	}
	ws := make([]string, 0, len(s.Warnings)+1)
	version := s.Version
	if version == "" {
		version = "version unknown"
	}
	line := fmt.Sprintf("imported from %s (%s)", s.Tool, version)
	if len(s.Missing) > 0 {
		line += "; not in the source: "
		for i, m := range s.Missing {
			if i > 0 {
				line += "; "
			}
			line += m
		}
	}
	ws = append(ws, line)
	return append(ws, s.Warnings...)
}

// Stat is the level's number for a metric and stat as an imported tool's summary
// names them (trace.SourceReference: ttft, tpot, itl, e2e with mean, p50, p90, p95,
// p99; output_tok_s, request_s, requests); ok is false when the analysis has none.
func (lv Level) Stat(metric, stat string) (float64, bool) {
	var s Summary
	switch metric {
	case "ttft":
		s = lv.TTFT
	case "tpot":
		s = lv.TPOT
	case "itl":
		s = lv.ITL
	case "e2e":
		s = lv.E2E
	case "output_tok_s":
		return lv.OutputTokS, true
	case "request_s":
		return lv.RequestS, true
	case "requests":
		return float64(lv.Requests - lv.Errors), true
	default:
		return 0, false
	}
	var p *float64
	switch stat {
	case "mean":
		p = s.Mean
	case "p50":
		p = s.P50
	case "p90":
		p = s.P90
	case "p95":
		p = s.P95
	case "p99":
		p = s.P99
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}
