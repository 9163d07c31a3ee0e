package shard

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// Other tools' load generators run in parallel (llm-d-benchmark's -j N starts N
// harness pods with one workload profile, each writing its own result file):
// MergeGenerators unites their imported runs level by level into one run, with
// the checks a ceiling merge makes where the files allow them.
//
// What a file says about time decides what can be checked:
//   - absolute send times (AIPerf's epoch ns, guidellm's epoch s): each
//     generator's window of each level is known, so a generator that started
//     late, or windows that hardly overlap, are named as for ceiling's shards;
//   - offsets from each tool's own clock (vLLM's start_times, inference-perf:
//     time.perf_counter readings, whose origin differs per machine) or no send
//     times at all (vLLM before 0.19, SGLang, llmperf, genai-bench): nothing
//     says whether the generators ran together. The merge says so plainly, as a
//     warning of the merged run, and checks what it can: each generator's
//     duration of the level against the longest.

// Generator is one load generator's results, imported as a trace
// (importer.ToTrace): its run metadata has a Source.
type Generator struct {
	Name string // the file (or directory) given, for messages
	Info trace.RunInfo
	Rows []trace.Row
}

// Timing kinds of a generator's send times.
const (
	timingAbsolute = "absolute"
	timingOffset   = "offset"
	timingRelative = "relative"
)

// epochFloor tells an absolute send time from an offset: importers write
// sent_ns as Unix-epoch nanoseconds when the tool saved wall-clock times, and as
// nanoseconds from the tool's own first send otherwise. No benchmark runs for 30
// years, so an offset never reaches 2000-01-01.
var epochFloor = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// workloadTolerance is how far two generators' mean prompt or output lengths may
// be apart and still be one workload profile (importer's rule for one sweep):
// the same lengths drawn again give means a few percent apart.
const workloadTolerance = 0.10

// MergeGenerators builds one run of the results of load generators of another
// tool that ran at the same time: level k of the merged run holds every
// generator's level k, its concurrency (or rate) the sum of theirs. It refuses
// files of different tools, models, servers, workloads, level sets or timing,
// naming the file and the field.
func MergeGenerators(gens []Generator) (Merged, error) {
	if len(gens) < 2 {
		name := "no file"
		if len(gens) == 1 {
			name = gens[0].Name
		}
		return Merged{}, fmt.Errorf("merging other tools' results needs the files of two or more load generators that ran at the same time; got %s (import a single file with ceiling import)", name)
	}
	timing := make([]string, len(gens))
	for i, g := range gens {
		if g.Info.Source == nil {
			return Merged{}, fmt.Errorf("%s is not another tool's result: merge ceiling's shard traces on their own", g.Name)
		}
		timing[i] = timingOf(g)
	}
	if err := checkSameProfile(gens, timing); err != nil {
		return Merged{}, err
	}

	first := gens[0].Info
	var m Merged
	m.Info = first
	m.Info.RunID = first.RunID + fmt.Sprintf("+%d", len(gens)-1)
	m.Info.Levels, m.Info.Warnings = nil, nil
	src := *first.Source
	src.Files, src.Missing, src.Warnings = nil, slices.Clone(src.Missing), nil
	src.Missing = appendNew(src.Missing, "the tools' own summary numbers of the merged levels (each file's summary covers its own generator only)")
	m.Info.Shard = &trace.ShardInfo{Count: len(gens)}
	m.Info.Plan.Concurrency, m.Info.Plan.Rates = nil, nil

	ins := make([]Input, len(gens))
	// A warning every file gave (the tool's own limits) is said once; one only
	// some files gave is said with their names.
	said := map[string]int{}
	for _, g := range gens {
		for _, w := range appendNew(nil, g.Source().Warnings...) {
			said[w]++
		}
	}
	for i, g := range gens {
		src.Files = append(src.Files, g.Source().Files...)
		src.Missing = appendNew(src.Missing, g.Source().Missing...)
		for _, w := range g.Source().Warnings {
			if said[w] == len(gens) {
				src.Warnings = appendNew(src.Warnings, w)
			} else {
				src.Warnings = appendNew(src.Warnings, fmt.Sprintf("%s: %s", g.Name, w))
			}
		}
		for _, w := range g.Info.Warnings {
			m.Info.Warnings = append(m.Info.Warnings, fmt.Sprintf("%s: %s", g.Name, w))
		}
		if !g.Info.Started.IsZero() && (m.Info.Started.IsZero() || g.Info.Started.Before(m.Info.Started)) {
			m.Info.Started = g.Info.Started
		}
		m.Info.Shard.Merged = append(m.Info.Shard.Merged, trace.MergedShard{Index: i, File: g.Name})
		ins[i] = Input{Name: g.Name, Info: g.Info, Rows: g.Rows, generator: fmt.Sprintf("generator %d (%s)", i, g.Name)}
		ins[i].Info.Shard = &trace.ShardInfo{Index: i, Count: len(gens)}
	}
	m.Info.Source = &src

	// Rows keep each generator's times; request ids and workers are moved to
	// per-generator bases so that the merged rows stay unique, and every row
	// carries the merged level's concurrency (or rate), as a shard's rows do.
	coords := make([]trace.LevelInfo, len(first.Levels))
	for k := range first.Levels {
		lv := first.Levels[k]
		lv.Concurrency, lv.Rate, lv.Requests, lv.Errors, lv.Rows = 0, 0, 0, 0, 0
		lv.References, lv.SourceDurationS = nil, 0
		var labels []string
		for _, g := range gens {
			gl := g.Info.Levels[k]
			lv.Concurrency += gl.Concurrency
			lv.Rate += gl.Rate
			lv.Requests += gl.Requests
			lv.Errors += gl.Errors
			lv.SourceDurationS = math.Max(lv.SourceDurationS, gl.SourceDurationS)
			if !gl.Started.IsZero() && (lv.Started.IsZero() || gl.Started.Before(lv.Started)) {
				lv.Started = gl.Started
			}
			labels = append(labels, gl.Label)
		}
		lv.Label = strings.Join(labels, " + ")
		coords[k] = lv
		if lv.Rate > 0 {
			m.Info.Plan.Rates = append(m.Info.Plan.Rates, lv.Rate)
		} else {
			m.Info.Plan.Concurrency = append(m.Info.Plan.Concurrency, lv.Concurrency)
		}
	}
	var reqBase int64
	for _, g := range gens {
		workerBase := map[int32]int32{}
		for _, r := range m.Rows {
			workerBase[r.Level] = max(workerBase[r.Level], r.Worker+1)
		}
		for _, r := range g.Rows {
			lv := coords[r.Level]
			r.RunID = m.Info.RunID
			r.RequestID += reqBase
			r.Worker += workerBase[r.Level]
			r.Concurrency, r.Rate = int32(lv.Concurrency), lv.Rate
			m.Rows = append(m.Rows, r)
		}
		reqBase += maxRequestID(g.Rows)
	}
	for k := range coords {
		lo, hi, n := levelSpan(m.Rows, k)
		if timing[0] == timingAbsolute && n > 0 {
			coords[k].Started, coords[k].Ended = time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC()
		}
		coords[k].Rows = n
	}
	m.Info.Levels = coords

	switch timing[0] {
	case timingAbsolute:
		for k := range coords {
			ls := make([]levelOf, 0, len(ins))
			for _, in := range ins {
				lo, hi, n := levelSpan(in.Rows, k)
				if n == 0 {
					continue
				}
				ls = append(ls, levelOf{in: in, li: trace.LevelInfo{Level: k, Started: time.Unix(0, lo), Ended: time.Unix(0, hi)}})
			}
			// Each generator is checked against the others' windows only: its
			// load against its own concurrency is the analysis' validity rule
			// applied to the merged level, as the tools record no share.
			m.Findings = append(m.Findings, checkLevel(k, ls, false)...)
		}
	default:
		what := "send times only as offsets from each generator's own clock (a time.perf_counter origin that differs per machine)"
		if timing[0] == timingRelative {
			what = "no send times"
		}
		m.Findings = append(m.Findings, Finding{Level: -1, Shard: -1, Kind: "unverified",
			Message: fmt.Sprintf("co-loading could not be verified: the %s files hold %s, so nothing shows that the %d generators loaded the server at the same time; the merged levels assume they did (each level's requests are placed as if every generator started together, and its duration is the longest generator's)",
				src.Tool, what, len(gens))})
		for k := range coords {
			m.Findings = append(m.Findings, checkDurations(k, ins, timing[0])...)
		}
	}
	slices.SortStableFunc(m.Rows, func(a, b trace.Row) int {
		if a.Level != b.Level {
			return int(a.Level - b.Level)
		}
		if a.SentNs != b.SentNs {
			if a.SentNs < b.SentNs {
				return -1
			}
			return 1
		}
		return int(a.RequestID - b.RequestID)
	})
	for _, f := range m.Findings {
		m.Info.Warnings = append(m.Info.Warnings, "merge: "+f.Message)
	}
	return m, nil
}

// Source is the generator's imported-source metadata (never nil after the check
// in MergeGenerators).
func (g Generator) Source() *trace.SourceInfo { return g.Info.Source }

// timingOf says how the generator's send times can be compared with another's.
func timingOf(g Generator) string {
	for _, l := range g.Info.Levels {
		if l.Timing == timingRelative {
			return timingRelative
		}
	}
	for _, r := range g.Rows {
		if !r.Warmup && r.SentNs < epochFloor {
			return timingOffset
		}
	}
	return timingAbsolute
}

// checkSameProfile refuses generators that did not run one workload profile
// against one server: the merged level would mix two experiments.
func checkSameProfile(gens []Generator, timing []string) error {
	a := gens[0]
	al := meanLengths(a.Rows)
	for i, g := range gens[1:] {
		i++
		field := func(name, got, want string) error {
			return fmt.Errorf("%s has %s %s but %s has %s: the files of parallel load generators must run one workload profile against one server", g.Name, name, got, a.Name, want)
		}
		switch {
		case g.Source().Tool != a.Source().Tool:
			return field("tool", g.Source().Tool, a.Source().Tool)
		case g.Info.Target.Model != "" && a.Info.Target.Model != "" && g.Info.Target.Model != a.Info.Target.Model:
			return field("model", fmt.Sprintf("%q", g.Info.Target.Model), fmt.Sprintf("%q", a.Info.Target.Model))
		case g.Info.Target.BaseURL != "" && a.Info.Target.BaseURL != "" && g.Info.Target.BaseURL != a.Info.Target.BaseURL:
			return field("server URL", g.Info.Target.BaseURL, a.Info.Target.BaseURL)
		case g.Info.Target.Endpoint != "" && a.Info.Target.Endpoint != "" && g.Info.Target.Endpoint != a.Info.Target.Endpoint:
			return field("endpoint", g.Info.Target.Endpoint, a.Info.Target.Endpoint)
		case len(g.Info.Levels) != len(a.Info.Levels):
			return field("levels", levelList(g.Info.Levels), levelList(a.Info.Levels))
		case timing[i] != timing[0]:
			return fmt.Errorf("%s has %s but %s has %s: the generators' times cannot be put on one timeline", g.Name, timingWords(timing[i]), a.Name, timingWords(timing[0]))
		}
		for k := range g.Info.Levels {
			gl, al := g.Info.Levels[k], a.Info.Levels[k]
			if gl.Concurrency != al.Concurrency || gl.Rate != al.Rate {
				return field("levels", levelList(g.Info.Levels), levelList(a.Info.Levels))
			}
		}
		gl := meanLengths(g.Rows)
		if !near(gl.prompt, al.prompt) {
			return field("mean prompt tokens", fmt.Sprintf("%.0f", gl.prompt.mean()), fmt.Sprintf("%.0f", al.prompt.mean()))
		}
		if !near(gl.output, al.output) {
			return field("mean output tokens", fmt.Sprintf("%.0f", gl.output.mean()), fmt.Sprintf("%.0f", al.output.mean()))
		}
	}
	return nil
}

func timingWords(t string) string {
	switch t {
	case timingAbsolute:
		return "absolute send times"
	case timingOffset:
		return "send times as offsets from its own start"
	}
	return "no send times"
}

// levelList is a generator's levels as the tool set them: "concurrency 1, 2, 4".
func levelList(ls []trace.LevelInfo) string {
	var cs, rs []string
	for _, l := range ls {
		if l.Rate > 0 {
			rs = append(rs, fmt.Sprintf("%g", l.Rate))
		} else {
			cs = append(cs, fmt.Sprint(l.Concurrency))
		}
	}
	var parts []string
	if len(cs) > 0 {
		parts = append(parts, "concurrency "+strings.Join(cs, ", "))
	}
	if len(rs) > 0 {
		parts = append(parts, "rate "+strings.Join(rs, ", ")+" req/s")
	}
	if len(parts) == 0 {
		return "no level"
	}
	return strings.Join(parts, " and ")
}

// checkDurations compares each generator's duration of level k with the
// longest: where send times cannot be compared, a generator that ran much
// shorter than another cannot have loaded the server with it the whole level.
func checkDurations(k int, ins []Input, timing string) []Finding {
	d := make([]float64, len(ins))
	longest := 0.0
	for i, in := range ins {
		if timing == timingRelative {
			d[i] = in.Info.Levels[k].SourceDurationS
		} else if lo, hi, n := levelSpan(in.Rows, k); n > 0 {
			d[i] = float64(hi-lo) / 1e9
		}
		longest = math.Max(longest, d[i])
	}
	tolerance := math.Max(lateMin.Seconds(), lateFraction*longest)
	var fs []Finding
	for i, in := range ins {
		if d[i] > 0 && longest-d[i] > tolerance {
			fs = append(fs, Finding{Level: k, Shard: i, Kind: "duration",
				Message: fmt.Sprintf("level %d: %s ran %.1f s, the longest generator %.1f s (tolerance %.1f s): they did not load the server together for the whole level", k, in.who(), d[i], longest, tolerance)})
		}
	}
	return fs
}

// levelSpan is the first send and the last end of level k's measured rows, and
// how many rows (warm-up included) the level has.
func levelSpan(rows []trace.Row, k int) (lo, hi int64, n int) {
	lo, hi = math.MaxInt64, math.MinInt64
	measured := 0
	for i := range rows {
		r := &rows[i]
		if int(r.Level) != k {
			continue
		}
		n++
		if r.Warmup {
			continue
		}
		measured++
		lo, hi = min(lo, r.SentNs), max(hi, r.EndNs)
	}
	if measured == 0 {
		return 0, 0, n
	}
	return lo, hi, n
}

func maxRequestID(rows []trace.Row) int64 {
	var m int64
	for _, r := range rows {
		m = max(m, r.RequestID)
	}
	return m
}

// lengths are the prompt and output tokens of a generator's successful measured
// rows, as mean, variance and count.
type lengths struct{ prompt, output moments }

type moments struct {
	n         int
	sum, sum2 float64
}

func (m *moments) add(v float64) { m.n, m.sum, m.sum2 = m.n+1, m.sum+v, m.sum2+v*v }

func (m moments) mean() float64 { return m.sum / float64(m.n) }

// varMean is the variance of the mean (the sample variance over n).
func (m moments) varMean() float64 {
	if m.n < 2 {
		return 0
	}
	mu := m.mean()
	return math.Max(0, (m.sum2-float64(m.n)*mu*mu)/float64(m.n-1)) / float64(m.n)
}

func meanLengths(rows []trace.Row) lengths {
	var l lengths
	for _, r := range rows {
		if r.Error != nil || r.Warmup {
			continue
		}
		if r.PromptTokens != nil {
			l.prompt.add(float64(*r.PromptTokens))
		}
		if r.OutputTokens != nil {
			l.output.add(float64(*r.OutputTokens))
		}
	}
	return l
}

// near says whether two generators' lengths are one workload's: means within
// workloadTolerance, or within sameDrawSE standard errors of their difference
// (outputs that stop at the end of sentence vary widely, and a pod's few dozen
// requests give means further apart than 10% by chance). What a file does not
// say agrees with anything.
func near(a, b moments) bool {
	if a.n == 0 || b.n == 0 {
		return true
	}
	d := math.Abs(a.mean() - b.mean())
	return d <= workloadTolerance*math.Max(math.Abs(a.mean()), math.Abs(b.mean())) ||
		d <= sameDrawSE*math.Sqrt(a.varMean()+b.varMean())
}

// sameDrawSE is how many standard errors apart two draws of one workload's
// lengths may be: 4 leaves a chance of about 6e-5 to refuse one profile's files.
const sameDrawSE = 4

// appendNew appends the values of add not already in list.
func appendNew(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}
