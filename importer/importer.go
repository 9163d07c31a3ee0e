// Package importer reads the result files of other LLM serving benchmarks (vLLM
// `bench serve` and `vllm bench sweep`, SGLang `bench_serving`, NVIDIA AIPerf,
// guidellm, Ray's llmperf, Kubernetes' inference-perf, SGLang's genai-bench) and turns their per-request records into a ceiling trace, so that
// analyze and report work on benchmarks that were already run.
//
// Honesty rules the importers follow:
//   - timing is never invented: a tool that saved no send times gives levels with
//     relative timing (see Level.Relative), whose throughput comes from the tool's
//     own measured duration;
//   - a per-request value is reconstructed only where it is exact (vLLM's E2E =
//     ttft + sum(itls)); anything else the file lacks stays null and is listed in
//     Run.Missing;
//   - a file without per-request records is refused (ErrSummaryOnly): the analysis
//     needs requests, and a summary cannot be turned into them;
//   - the tool's own summary numbers are kept as References, so that analyze can
//     compare them with its own statistics of the imported rows.
package importer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/engine"
)

// FromAuto is --from's default: each file's tool is detected from its content.
// The tools' own names (FromVLLM, FromSGLang, ...) are in their files.
const FromAuto = "auto"

// ErrSummaryOnly is wrapped by the error for a file that holds a tool's summary
// but no per-request records.
var ErrSummaryOnly = errors.New("per-request data is needed")

// Run is one imported sweep: several files of one tool, one level per benchmark
// point, ordered by concurrency and then rate.
type Run struct {
	Tool        string   // FromVLLM, FromSGLang, ...
	ToolVersion string   // "" when the file does not say
	Files       []string // as given
	Model       string
	BaseURL     string      // without credentials; "" when unknown
	Endpoint    string      // "chat", "completions" or ""
	ServerKind  engine.Name // engine.SGLang when the tool saw the server, "" when unknown
	ServerVer   string
	Started     time.Time // zero when unknown
	Levels      []Level
	// Missing says what the source does not hold, in words ("per-request E2E
	// (rebuilt exactly as ttft + sum(itls))", "absolute send times", ...).
	Missing  []string
	Warnings []string
}

// Level is one benchmark point (one vLLM result, one guidellm benchmark, ...).
type Level struct {
	Concurrency int     // closed-loop cap; 0 for a rate level
	Rate        float64 // open-loop arrival rate, req/s; 0 for a closed-loop level
	Label       string  // where it came from: "file.jsonl#3", "max_num_seqs=4 run=0"
	Started     time.Time
	// Relative is true when the tool saved no send times: every request is placed
	// at time 0 of the level, so latencies (differences from the send) are exact
	// while positions in time carry no information. Throughput then comes from
	// DurationS, the tool's own measured duration.
	Relative  bool
	DurationS float64 // the tool's measured duration of the level, 0 when unknown
	Requests  []Request
	// References are the tool's own summary numbers for this level.
	References []Reference
}

// Request is one request attempt. Times are in seconds; SentNs is nanoseconds from
// the Unix epoch (or from the level's start when only offsets are known, or 0 for
// relative timing).
type Request struct {
	SentNs    int64
	Worker    int
	Warmup    bool
	TTFT      *float64  // nil for a failed request
	Gaps      []float64 // chunk gaps after the first chunk
	E2E       *float64  // nil when unknown
	Prompt    *int
	Output    *int
	Reasoning *int
	Status    int    // HTTP status, 200 for success when the tool does not say
	Err       string // "" for success
}

// Options configure an import.
type Options struct {
	From  string // one of Froms(); "" = auto
	RunID string // "" = derived from the first file's name
}

// Import reads files (all of one tool) into one Run: the user said they are one
// sweep (ceiling import -o names one trace). Files that measured another model
// are warned about; ImportRuns keeps such files apart instead.
func Import(ctx context.Context, files []string, opt Options) (*Run, error) {
	runs, err := readFiles(ctx, files, opt)
	if err != nil {
		return nil, err
	}
	return merge(runs)
}

// ImportRuns reads files (all of one tool) into as many runs as they measured:
// files belong to one run only when their tool, model, server and workload agree
// (see sameRun); otherwise they are separate runs, to be compared side by side,
// in the order of their first file.
func ImportRuns(ctx context.Context, files []string, opt Options) ([]*Run, error) {
	runs, err := readFiles(ctx, files, opt)
	if err != nil {
		return nil, err
	}
	var groups [][]*Run
	for _, r := range runs {
		placed := false
		for i, g := range groups {
			if sameRun(g[0], r) {
				groups[i] = append(g, r)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []*Run{r})
		}
	}
	out := make([]*Run, 0, len(groups))
	for _, g := range groups {
		m, err := merge(g)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// readFiles reads each file into a Run of its own, in the order given.
func readFiles(ctx context.Context, files []string, opt Options) ([]*Run, error) {
	if len(files) == 0 {
		return nil, errors.New("import: no file given")
	}
	from := opt.From
	if from == "" {
		from = FromAuto
	}
	given := map[string]bool{}
	for _, f := range files {
		given[filepath.Clean(f)] = true
	}
	var runs []*Run
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tool := from
		if tool == FromAuto {
			t, err := Detect(f)
			if err != nil {
				return nil, err
			}
			tool = t
		}
		t, ok := toolNamed(tool)
		if !ok {
			return nil, fmt.Errorf("import: unknown source tool %q (want one of %s)", tool, strings.Join(Froms(), ", "))
		}
		if t.readWithRecords != nil && t.readWithRecords(f, func(p string) bool { return given[p] }) {
			continue // a summary whose records are also given: read with them
		}
		r, err := t.read(f)
		if err != nil {
			return nil, err
		}
		if err := checkRun(r, f); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// merge joins runs of one tool into one, levels ordered by their coordinate.
func merge(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("import: no result file among the files given")
	}
	run := runs[0]
	for _, r := range runs[1:] {
		if r.Tool != run.Tool {
			return nil, fmt.Errorf("import: %s is a %s result but %s is a %s result: import one tool's files at a time", r.Files[0], r.Tool, run.Files[0], run.Tool)
		}
		if r.Model != run.Model && r.Model != "" && run.Model != "" {
			run.Warnings = append(run.Warnings, fmt.Sprintf("%s measured model %q, %s measured %q: they are imported as one run", r.Files[0], r.Model, run.Files[0], run.Model))
		}
		if r.ToolVersion != run.ToolVersion && r.ToolVersion != "" {
			if run.ToolVersion == "" {
				run.ToolVersion = r.ToolVersion
			} else if !strings.Contains(run.ToolVersion, r.ToolVersion) {
				run.ToolVersion += ", " + r.ToolVersion
			}
		}
		run.Files = append(run.Files, r.Files...)
		run.Levels = append(run.Levels, r.Levels...)
		run.Missing = appendNew(run.Missing, r.Missing...)
		run.Warnings = appendNew(run.Warnings, r.Warnings...)
		if run.Started.IsZero() || (!r.Started.IsZero() && r.Started.Before(run.Started)) {
			run.Started = r.Started
		}
	}
	// Levels are ordered by their coordinate: closed-loop levels by concurrency,
	// then rate levels by rate; points with the same coordinate keep file order.
	sort.SliceStable(run.Levels, func(i, j int) bool {
		a, b := run.Levels[i], run.Levels[j]
		if (a.Rate > 0) != (b.Rate > 0) {
			return a.Rate == 0
		}
		if a.Rate != b.Rate {
			return a.Rate < b.Rate
		}
		return a.Concurrency < b.Concurrency
	})
	if relative := countRelative(run.Levels); relative > 0 {
		run.Missing = appendNew(run.Missing, "absolute send times")
		run.Warnings = appendNew(run.Warnings, fmt.Sprintf("%d of %d levels have no send times (%s saved none): latencies are exact, but throughput is the tool's own completed/duration and output tokens/duration, concurrency over time and the per-request timeline are not available",
			relative, len(run.Levels), run.Tool))
	}
	return run, nil
}

func countRelative(levels []Level) int {
	n := 0
	for _, l := range levels {
		if l.Relative {
			n++
		}
	}
	return n
}

// appendNew appends the values of add not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		found := false
		for _, v := range list {
			if v == a {
				found = true
				break
			}
		}
		if !found {
			list = append(list, a)
		}
	}
	return list
}

// assignWorkers gives each request of a level with real send times a worker slot:
// a request takes the lowest slot whose previous request ended before it was
// sent. For a tool that caps concurrency with a semaphore this is a valid
// assignment of the cap's slots, which is what the steady-state window needs.
func assignWorkers(reqs []Request) {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].SentNs < reqs[order[b]].SentNs })
	var busyUntil []int64
	for _, i := range order {
		r := &reqs[i]
		end := r.SentNs + endOffsetNs(r)
		slot := -1
		for s, until := range busyUntil {
			if until <= r.SentNs {
				slot = s
				break
			}
		}
		if slot < 0 {
			slot = len(busyUntil)
			busyUntil = append(busyUntil, 0)
		}
		busyUntil[slot] = end
		r.Worker = slot
	}
}

// endOffsetNs is the request's end as nanoseconds after its send, as write.go
// writes it.
func endOffsetNs(r *Request) int64 {
	switch {
	case r.E2E != nil:
		return secondsToNs(*r.E2E)
	case r.TTFT != nil:
		return secondsToNs(*r.TTFT)
	}
	return 0
}

func ptrTo[T any](v T) *T { return &v }

// ImportEach reads files (all of one tool) into one Run per file, in the order
// given: the results of load generators that ran at the same time, which
// `ceiling merge` unites per level (package shard, MergeGenerators) instead of
// setting side by side as one sweep's points. A summary given beside its records
// (AIPerf, llmperf) is read with them, as Import does.
func ImportEach(ctx context.Context, files []string, opt Options) ([]*Run, error) {
	runs, err := readFiles(ctx, files, opt)
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		// merge of one run orders its levels and says what relative timing lacks.
		if runs[i], err = merge([]*Run{r}); err != nil {
			return nil, err
		}
	}
	return runs, nil
}
