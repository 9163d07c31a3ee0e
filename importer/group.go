package importer

import (
	"errors"
	"math"

	"github.com/ceiling-llm/ceiling/trace"
)

// Grouping: which of the names a user gives together are ceiling traces and which
// are other tools' results, and which of those results make one run.

// Input is one thing to analyze: a ceiling trace (Tool "", one file) or the
// result files of one tool (Tool set), in the order given.
type Input struct {
	Tool  string
	Files []string
}

// Inputs splits names into traces and the files of each tool, keeping the order
// of first appearance. Content decides, never the name (see Detect).
func Inputs(names []string) ([]Input, error) {
	var out []Input
	byTool := map[string]int{}
	for _, name := range names {
		// Detect opens the file: refuse a FIFO or device first, or it blocks.
		if _, err := trace.CheckInputPath(name); err != nil {
			return nil, err
		}
		tool, err := Detect(name)
		if errors.Is(err, ErrUnknownFormat) {
			out = append(out, Input{Files: []string{name}})
			continue
		}
		if err != nil {
			return nil, err
		}
		if i, ok := byTool[tool]; ok {
			out[i].Files = append(out[i].Files, name)
			continue
		}
		byTool[tool] = len(out)
		out = append(out, Input{Tool: tool, Files: []string{name}})
	}
	return out, nil
}

// workloadTolerance is how far two files' mean prompt or output lengths may be
// apart, relative, and still be one workload: the same dataset and lengths drawn
// again give means a few percent apart, another workload (1024 against 1536
// prompt tokens, 512 against 256 output tokens) far more.
const workloadTolerance = 0.10

// sameRun says whether two files' runs are one sweep: the same tool, model and
// server, and the same workload (mean prompt and output lengths within
// workloadTolerance). What a file does not say (no model, no server) does not
// tell them apart.
func sameRun(a, b *Run) bool {
	if a.Tool != b.Tool {
		return false
	}
	if a.Model != "" && b.Model != "" && a.Model != b.Model {
		return false
	}
	if a.BaseURL != "" && b.BaseURL != "" && a.BaseURL != b.BaseURL {
		return false
	}
	if a.ServerKind != "" && b.ServerKind != "" && a.ServerKind != b.ServerKind {
		return false
	}
	ap, ao := meanLengths(a)
	bp, bo := meanLengths(b)
	return near(ap, bp) && near(ao, bo)
}

// meanLengths are the mean prompt and output tokens of a run's successful
// requests (NaN when none says).
func meanLengths(r *Run) (prompt, output float64) {
	var ps, os float64
	var pn, on int
	for _, l := range r.Levels {
		for _, q := range l.Requests {
			if q.Err != "" || q.Warmup {
				continue
			}
			if q.Prompt != nil {
				ps += float64(*q.Prompt)
				pn++
			}
			if q.Output != nil {
				os += float64(*q.Output)
				on++
			}
		}
	}
	prompt, output = math.NaN(), math.NaN()
	if pn > 0 {
		prompt = ps / float64(pn)
	}
	if on > 0 {
		output = os / float64(on)
	}
	return prompt, output
}

// near says whether two means agree within workloadTolerance; an unknown one
// agrees with anything.
func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) <= workloadTolerance*math.Max(math.Abs(a), math.Abs(b))
}
