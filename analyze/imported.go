package analyze

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ceiling-llm/ceiling/importer"
	"github.com/ceiling-llm/ceiling/trace"
)

// Imported runs: result files of other benchmark tools (see package importer) are
// accepted wherever a trace is. Files are recognized by content; all the files of
// one tool named in one call make one run (one level per benchmark point). They
// are converted into a trace in a temporary directory and analyzed like any other;
// the trace's metadata keeps what analyze needs to treat them honestly.

// sourceMeta is the ceiling.run "source" object of an imported run.
type sourceMeta = trace.SourceInfo

// maxDifferenceWarnings is how many reference differences become warnings; the
// rest are counted (all are in Run.SourceComparison).
const maxDifferenceWarnings = 8

// sourceGroup is one run to import: files of one tool, in the order given.
type sourceGroup struct {
	tool  string
	files []string
}

// planSources splits the names given to Analyze into traces and import groups,
// keeping the order of first appearance. item.group is nil for a trace.
func planSources(names []string) ([]*sourceGroup, error) {
	var plan []*sourceGroup
	byTool := map[string]*sourceGroup{}
	for _, name := range names {
		// Detect opens the file: refuse a FIFO or device first, or it blocks.
		if _, err := checkInputPath(name); err != nil {
			return nil, err
		}
		tool, err := importer.Detect(name)
		if errors.Is(err, importer.ErrUnknownFormat) {
			plan = append(plan, &sourceGroup{files: []string{name}})
			continue
		}
		if err != nil {
			return nil, err
		}
		if g := byTool[tool]; g != nil {
			g.files = append(g.files, name)
			continue
		}
		g := &sourceGroup{tool: tool, files: []string{name}}
		byTool[tool] = g
		plan = append(plan, g)
	}
	return plan, nil
}

// analyzeImport imports one group into a temporary trace and analyzes it.
func analyzeImport(ctx context.Context, g *sourceGroup, opt Options) ([]Run, error) {
	run, err := importer.Import(ctx, g.files, importer.Options{From: g.tool})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ceiling-import-*")
	if err != nil {
		return nil, fmt.Errorf("importing %s: %w", g.files[0], err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "imported.parquet")
	if err := importer.WriteFile(path, run, importer.WriteOptions{}); err != nil {
		return nil, err
	}
	runs, err := analyzeSource(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	name := g.files[0]
	if len(g.files) > 1 {
		name = fmt.Sprintf("%s and %d more files", g.files[0], len(g.files)-1)
	}
	for i := range runs {
		runs[i].Source = name
	}
	return runs, nil
}

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

// compareSource compares the tool's own summary numbers with the analysis.
func compareSource(r *Run, s *sourceMeta, meta map[int]*levelMeta) {
	if s == nil {
		return
	}
	c := &importer.Comparison{Tool: s.Tool, Differences: []importer.Difference{}}
	for _, lv := range r.Levels {
		m := meta[lv.Level]
		if m == nil || len(m.References) == 0 {
			continue
		}
		n, diffs := importer.Compare(s.Tool, lv.Level, m.References, func(metric, stat string) (float64, bool) {
			return levelStat(lv, metric, stat)
		})
		c.Checked += n
		c.Differences = append(c.Differences, diffs...)
	}
	if c.Checked == 0 {
		return
	}
	r.SourceComparison = c
	for i, d := range c.Differences {
		if i == maxDifferenceWarnings {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d more differences from %s's own summary (see source_comparison in --format json)", len(c.Differences)-i, s.Tool))
			break
		}
		r.Warnings = append(r.Warnings, "differs from "+s.Tool+"'s own summary: "+d.String())
	}
}

// levelStat is the analysis's number for a reference's metric and stat.
func levelStat(lv Level, metric, stat string) (float64, bool) {
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
