package shard

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// Input is one shard's trace, read whole.
type Input struct {
	Name    string // file name, for messages
	Info    trace.RunInfo
	Rows    []trace.Row
	Metrics []trace.MetricSample // the sidecar's samples; nil when it had none
	// Unverified are the files read without a checksum (the trace, its sidecar):
	// the merge says so in the merged run, whose own checksum covers their values
	// only as read.
	Unverified []string
	// generator names another tool's load generator (MergeGenerators): the
	// findings say "generator 1 (file)" where a shard's say "shard 1".
	generator string
}

// who names the input in findings.
func (in Input) who() string {
	if in.generator != "" {
		return in.generator
	}
	return fmt.Sprintf("shard %d", in.Info.Shard.Index)
}

// noun is what the inputs are called in findings.
func (in Input) noun() string {
	if in.generator != "" {
		return "generator"
	}
	return "shard"
}

// Read reads the shard trace at path and its metrics sidecar, when there is one.
func Read(path string) (Input, error) {
	info, rows, err := trace.ReadFile(path)
	if err != nil {
		return Input{}, fmt.Errorf("reading shard %s: %w", path, err)
	}
	in := Input{Name: path, Info: info, Rows: rows}
	if ok, err := (trace.File{Name: path}).Verified(); err != nil {
		return Input{}, fmt.Errorf("reading shard %s: %w", path, err)
	} else if !ok {
		in.Unverified = append(in.Unverified, path)
	}
	mp := trace.MetricsPath(path)
	if _, err := os.Stat(mp); err == nil {
		mi, samples, err := trace.ReadMetricsFile(mp)
		if err != nil {
			return Input{}, fmt.Errorf("reading the metrics of shard %s: %w", path, err)
		}
		if mi.RunID == info.RunID {
			in.Metrics = samples
			if ok, err := (trace.File{Name: mp}).Verified(); err == nil && !ok {
				in.Unverified = append(in.Unverified, mp)
			}
		}
	}
	return in, nil
}

// Finding is something the merge noticed about how the shards ran together: a
// shard late or slow at a level, windows that barely overlap, clocks not
// measured. Level and Shard are -1 where the finding is about no one level or
// shard.
type Finding struct {
	Level   int    `json:"level"`
	Shard   int    `json:"shard"`
	Kind    string `json:"kind"` // late, slow, overlap, missing_level, clock, metrics, unverified
	Message string `json:"message"`
}

func (f Finding) String() string { return f.Message }

// Merged is the run made of the shards.
type Merged struct {
	Info     trace.RunInfo
	Rows     []trace.Row
	Metrics  []trace.MetricSample
	Findings []Finding
}

// Thresholds of the merge's checks. A shard whose level started later than the
// earliest shard's by more than lateFraction of the level (and at least lateMin)
// is late; one that kept less than slowFraction of its workers busy (or
// completed less than slowFraction of its rate) inside the common window is
// slow, the same 80% the analysis asks of a whole level; windows overlapping
// less than overlapFraction of the longest mean the shards did not load the
// server together.
const (
	lateFraction    = 0.05
	lateMin         = time.Second
	slowFraction    = 0.8
	overlapFraction = 0.5
)

// Merge builds one run of the shards of one sweep. It refuses shards of
// different runs, plans or targets, and a missing or repeated shard; what it
// notices about timing is returned as findings and stored as warnings of the
// merged run, so that the analysis shows them.
func Merge(inputs []Input) (Merged, error) {
	if len(inputs) == 0 {
		return Merged{}, errors.New("no shard given")
	}
	ins := slices.Clone(inputs)
	if err := checkSameSweep(ins); err != nil {
		return Merged{}, err
	}
	slices.SortFunc(ins, func(a, b Input) int { return cmp.Compare(a.Info.Shard.Index, b.Info.Shard.Index) })

	var m Merged
	corrected, err := clockCorrect(ins, &m)
	if err != nil {
		return Merged{}, err
	}
	first := ins[0].Info
	m.Info = first
	m.Info.Levels = nil
	m.Info.Warnings = nil
	m.Info.StopReason = ""
	m.Info.Shard = &trace.ShardInfo{Count: first.Shard.Count, StartAt: first.Shard.StartAt, GapS: first.Shard.GapS}
	for _, in := range ins {
		ms := trace.MergedShard{Index: in.Info.Shard.Index, File: in.Name, Hostname: in.Info.Client.Hostname}
		if corrected {
			ms.ClockOffsetNs, ms.ClockUncertaintyNs = in.Info.Shard.ClockOffsetNs, in.Info.Shard.ClockUncertaintyNs
		}
		m.Info.Shard.Merged = append(m.Info.Shard.Merged, ms)
		if in.Info.Started.Before(m.Info.Started) {
			m.Info.Started = in.Info.Started
		}
		if in.Info.Ended.After(m.Info.Ended) {
			m.Info.Ended = in.Info.Ended
		}
		m.Info.Interrupted = m.Info.Interrupted || in.Info.Interrupted
		for _, w := range in.Info.Warnings {
			m.Info.Warnings = append(m.Info.Warnings, fmt.Sprintf("shard %d: %s", in.Info.Shard.Index, w))
		}
		m.Rows = append(m.Rows, in.Rows...)
	}
	m.Info.StopReason = stopReasons(ins)
	for _, in := range ins {
		for _, f := range in.Unverified {
			m.Findings = append(m.Findings, Finding{Level: -1, Shard: in.Info.Shard.Index, Kind: "unverified",
				Message: fmt.Sprintf("%s of %s: the merged file's checksum covers its values only as they were read", trace.UnverifiedWarning(f), in.who())})
		}
	}
	mergeLevels(ins, &m)
	mergeMetrics(ins, &m)
	slices.SortStableFunc(m.Rows, func(a, b trace.Row) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.SentNs, b.SentNs), cmp.Compare(a.RequestID, b.RequestID))
	})
	for _, f := range m.Findings {
		m.Info.Warnings = append(m.Info.Warnings, "merge: "+f.Message)
	}
	return m, nil
}

// checkSameSweep refuses inputs that are not the shards of one sweep.
func checkSameSweep(ins []Input) error {
	first := ins[0]
	if first.Info.Shard == nil {
		return fmt.Errorf("%s is not a shard's trace (its run info names no shard): only the traces of a sharded recording merge", first.Name)
	}
	plan, _ := json.Marshal(first.Info.Plan)
	seen := map[int]string{}
	for _, in := range ins {
		s := in.Info.Shard
		switch {
		case s == nil:
			return fmt.Errorf("%s is not a shard's trace (its run info names no shard): only the traces of a sharded recording merge", in.Name)
		case len(s.Merged) > 0:
			return fmt.Errorf("%s is already a merged run", in.Name)
		case in.Info.RunID != first.Info.RunID:
			return fmt.Errorf("%s belongs to run %s, %s to run %s: the shards of one sweep share a run id", in.Name, in.Info.RunID, first.Name, first.Info.RunID)
		case s.Count != first.Info.Shard.Count:
			return fmt.Errorf("%s is a shard of %d, %s of %d", in.Name, s.Count, first.Name, first.Info.Shard.Count)
		case in.Info.Target != first.Info.Target:
			return fmt.Errorf("%s measured %s (%s), %s measured %s (%s): the shards of one sweep load one server", in.Name, in.Info.Target.BaseURL, in.Info.Target.Model, first.Name, first.Info.Target.BaseURL, first.Info.Target.Model)
		}
		if p, _ := json.Marshal(in.Info.Plan); string(p) != string(plan) {
			return fmt.Errorf("%s has another plan than %s (%s against %s): the shards of one sweep run one plan", in.Name, first.Name, p, plan)
		}
		if other, dup := seen[s.Index]; dup {
			return fmt.Errorf("%s and %s are both shard %d", other, in.Name, s.Index)
		}
		seen[s.Index] = in.Name
	}
	var missing []string
	for i := range first.Info.Shard.Count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shards %s of %d are missing: without them the merged levels would not have reached their concurrency (give every shard's trace)", strings.Join(missing, ", "), first.Info.Shard.Count)
	}
	return nil
}

// maxClockOffset bounds the clock offset a shard may say it measured: clocks
// kept by NTP are milliseconds apart and an unsynchronised one minutes or hours,
// so a day is far beyond any real offset, while a forged one (9e18 ns) overflowed
// the times it was added to (a window of -8,999,999,997 s, exit 0).
const maxClockOffset = 24 * time.Hour

// clockCorrect moves every shard's times onto the server's clock when every
// shard measured its offset, and says so when some did not. An offset or
// uncertainty beyond maxClockOffset, or one that would carry a time past the
// int64 nanoseconds, is refused naming the shard's file and the field.
func clockCorrect(ins []Input, m *Merged) (bool, error) {
	for _, in := range ins {
		s := in.Info.Shard
		if s.ClockOffsetNs < -int64(maxClockOffset) || s.ClockOffsetNs > int64(maxClockOffset) {
			return false, fmt.Errorf("%s: shard.clock_offset_ns is %d (%s): beyond ±%s, no clock measured against the server is that far off (the file is damaged or altered)", in.Name, s.ClockOffsetNs, time.Duration(s.ClockOffsetNs), maxClockOffset)
		}
		if s.ClockUncertaintyNs < 0 || s.ClockUncertaintyNs > int64(maxClockOffset) {
			return false, fmt.Errorf("%s: shard.clock_uncertainty_ns is %d: want 0 (not measured) up to %s", in.Name, s.ClockUncertaintyNs, maxClockOffset)
		}
	}
	for _, in := range ins {
		if in.Info.Shard.ClockUncertaintyNs <= 0 {
			if len(ins) > 1 {
				m.Findings = append(m.Findings, Finding{Level: -1, Shard: in.Info.Shard.Index, Kind: "clock",
					Message: fmt.Sprintf("shard %d did not measure its clock against the server: the shards' times are compared as their clocks read them", in.Info.Shard.Index)})
			}
			return false, nil
		}
	}
	for i := range ins {
		in := &ins[i]
		d := in.Info.Shard.ClockOffsetNs
		if d == 0 {
			continue
		}
		rows := slices.Clone(in.Rows)
		for j := range rows {
			r := &rows[j]
			for _, t := range []*int64{&r.ScheduledNs, &r.SentNs, &r.EndNs, r.FirstTokenNs, r.FirstContentNs} {
				if t != nil && !fitsShift(*t, d) {
					return false, fmt.Errorf("%s: shard.clock_offset_ns %d carries request %d's times past what int64 nanoseconds hold (a time of %d ns)", in.Name, d, r.RequestID, *t)
				}
			}
			r.ScheduledNs += d
			r.SentNs += d
			r.EndNs += d
			if r.FirstTokenNs != nil {
				v := *r.FirstTokenNs + d
				r.FirstTokenNs = &v
			}
			if r.FirstContentNs != nil {
				v := *r.FirstContentNs + d
				r.FirstContentNs = &v
			}
		}
		in.Rows = rows
		levels := slices.Clone(in.Info.Levels)
		for j := range levels {
			levels[j].Started = levels[j].Started.Add(time.Duration(d))
			levels[j].Ended = levels[j].Ended.Add(time.Duration(d))
		}
		in.Info.Levels = levels
		in.Info.Started = in.Info.Started.Add(time.Duration(d))
		in.Info.Ended = in.Info.Ended.Add(time.Duration(d))
		metrics := slices.Clone(in.Metrics)
		for j := range metrics {
			if !fitsShift(metrics[j].TsNs, d) {
				return false, fmt.Errorf("%s: shard.clock_offset_ns %d carries a metrics sample's time (%d ns) past what int64 nanoseconds hold", in.Name, d, metrics[j].TsNs)
			}
			metrics[j].TsNs += d
		}
		in.Metrics = metrics
	}
	return true, nil
}

// fitsShift says whether t + d stays inside int64.
func fitsShift(t, d int64) bool {
	return (d >= 0 && t <= math.MaxInt64-d) || (d < 0 && t >= math.MinInt64-d)
}

// mergeLevels unites each level of the shards and checks that they ran it together.
func mergeLevels(ins []Input, m *Merged) {
	byLevel := map[int][]levelOf{}
	var order []int
	for _, in := range ins {
		for _, li := range in.Info.Levels {
			if _, ok := byLevel[li.Level]; !ok {
				order = append(order, li.Level)
			}
			byLevel[li.Level] = append(byLevel[li.Level], levelOf{in: in, li: li})
		}
	}
	slices.Sort(order)
	for _, k := range order {
		ls := byLevel[k]
		if len(ls) < len(ins) {
			m.Findings = append(m.Findings, missingLevel(k, ins, ls))
		}
		m.Info.Levels = append(m.Info.Levels, mergeLevel(ls))
		m.Findings = append(m.Findings, checkLevel(k, ls, true)...)
	}
}

// levelOf is one shard's record of one level.
type levelOf struct {
	in Input
	li trace.LevelInfo
}

func missingLevel(k int, ins []Input, ls []levelOf) Finding {
	have := map[int]bool{}
	for _, l := range ls {
		have[l.in.Info.Shard.Index] = true
	}
	var gone []string
	for _, in := range ins {
		if !have[in.Info.Shard.Index] {
			why := in.Info.StopReason
			if why == "" {
				why = "no reason recorded"
			}
			gone = append(gone, fmt.Sprintf("shard %d (%s)", in.Info.Shard.Index, why))
		}
	}
	return Finding{Level: k, Shard: -1, Kind: "missing_level",
		Message: fmt.Sprintf("level %d was not recorded by %s: the merged level holds only the other shards' load", k, strings.Join(gone, ", "))}
}

// mergeLevel is the merged LevelInfo: the whole level's target, the union of
// the shards' times and the sums of their counts.
func mergeLevel(ls []levelOf) trace.LevelInfo {
	out := ls[0].li
	out.Workers, out.WorkerRate = 0, 0
	var reasons []string
	for i, l := range ls {
		if i > 0 {
			if l.li.Started.Before(out.Started) {
				out.Started = l.li.Started
			}
			if l.li.Ended.After(out.Ended) {
				out.Ended = l.li.Ended
			}
			out.Requests += l.li.Requests
			out.Errors += l.li.Errors
			out.Rows += l.li.Rows
			out.OutputTokS += l.li.OutputTokS
			out.ClientCPUUtil = max(out.ClientCPUUtil, l.li.ClientCPUUtil)
			out.SendLagP99S = max(out.SendLagP99S, l.li.SendLagP99S)
		}
		if l.li.StopReason != "" {
			reasons = append(reasons, fmt.Sprintf("shard %d: %s", l.in.Info.Shard.Index, l.li.StopReason))
		}
	}
	out.StopReason = strings.Join(reasons, "; ")
	return out
}

// checkLevel names the shards that were late or slow at level k, and says when
// the shards' windows hardly overlap. slow asks for the check of each shard's
// load against its share, which needs its workers (or rate) recorded.
func checkLevel(k int, ls []levelOf, slow bool) []Finding {
	if len(ls) < 2 {
		return nil
	}
	earliest, latestStart := ls[0].li.Started, ls[0].li.Started
	firstEnd, longest := ls[0].li.Ended, time.Duration(0)
	for _, l := range ls {
		if l.li.Started.Before(earliest) {
			earliest = l.li.Started
		}
		if l.li.Started.After(latestStart) {
			latestStart = l.li.Started
		}
		if l.li.Ended.Before(firstEnd) {
			firstEnd = l.li.Ended
		}
		longest = max(longest, l.li.Ended.Sub(l.li.Started))
	}
	var fs []Finding
	tolerance := max(lateMin, time.Duration(lateFraction*float64(longest)))
	for _, l := range ls {
		if late := l.li.Started.Sub(earliest); late > tolerance {
			fs = append(fs, Finding{Level: k, Shard: l.in.Info.Shard.Index, Kind: "late",
				Message: fmt.Sprintf("level %d: %s started %.1f s after the first %s (tolerance %.1f s)", k, l.in.who(), late.Seconds(), l.in.noun(), tolerance.Seconds())})
		}
	}
	overlap := firstEnd.Sub(latestStart)
	if longest > 0 && float64(overlap) < overlapFraction*float64(longest) {
		fs = append(fs, Finding{Level: k, Shard: -1, Kind: "overlap",
			Message: fmt.Sprintf("level %d: the %ss ran together for only %.1f s of %.1f s: the merged level did not load the server at its concurrency for most of its time", k, ls[0].in.noun(), max(overlap, 0).Seconds(), longest.Seconds())})
		return fs
	}
	if !slow {
		return fs
	}
	from, to := latestStart.UnixNano(), firstEnd.UnixNano()
	for _, l := range ls {
		if f, ok := slowShard(k, l, from, to); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// slowShard checks one shard's load inside the common window [from, to]: the
// time-averaged number of its requests in flight against its workers (closed
// loop), or its completions per second against its rate (open loop).
func slowShard(k int, l levelOf, from, to int64) (Finding, bool) {
	span := float64(to - from)
	if span <= 0 {
		return Finding{}, false
	}
	var busy float64
	completed := 0
	for i := range l.in.Rows {
		r := &l.in.Rows[i]
		if int(r.Level) != k || r.Warmup {
			continue
		}
		s, e := max(r.SentNs, from), min(r.EndNs, to)
		if e > s {
			busy += float64(e - s)
		}
		if r.EndNs >= from && r.EndNs <= to && r.Error == nil {
			completed++
		}
	}
	idx := l.in.Info.Shard.Index
	switch {
	case l.li.Workers > 0:
		inFlight := busy / span
		if inFlight < slowFraction*float64(l.li.Workers) {
			return Finding{Level: k, Shard: idx, Kind: "slow",
				Message: fmt.Sprintf("level %d: shard %d kept %.1f of its %d workers busy while all shards ran (under %.0f%%): it did not carry its share", k, idx, inFlight, l.li.Workers, 100*slowFraction)}, true
		}
	case l.li.WorkerRate > 0:
		rate := float64(completed) / (span / 1e9)
		if rate < slowFraction*l.li.WorkerRate {
			return Finding{Level: k, Shard: idx, Kind: "slow",
				Message: fmt.Sprintf("level %d: shard %d completed %.2f requests/s of its %.2f while all shards ran (under %.0f%%): it did not carry its share", k, idx, rate, l.li.WorkerRate, 100*slowFraction)}, true
		}
	}
	return Finding{}, false
}

// mergeMetrics keeps one scraper's samples: the lowest shard that has any
// (shard 0 scrapes by default, the others only when told to).
func mergeMetrics(ins []Input, m *Merged) {
	var with []string
	for _, in := range ins {
		if len(in.Metrics) == 0 {
			continue
		}
		if m.Metrics == nil {
			m.Metrics = in.Metrics
		}
		with = append(with, fmt.Sprint(in.Info.Shard.Index))
	}
	if len(with) > 1 {
		m.Findings = append(m.Findings, Finding{Level: -1, Shard: -1, Kind: "metrics",
			Message: fmt.Sprintf("shards %s all scraped the server's metrics: the merged run keeps shard %s's (one scraper, so counters are not counted twice)", strings.Join(with, ", "), with[0])})
	}
}

// stopReasons joins the shards' stop reasons, once each.
func stopReasons(ins []Input) string {
	var out []string
	for _, in := range ins {
		if r := in.Info.StopReason; r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}

// Write writes the merged run to path and its metrics sidecar beside it.
func (m Merged) Write(path string) error {
	if err := trace.WriteFile(path, m.Info, m.Rows); err != nil {
		return err
	}
	if len(m.Metrics) > 0 {
		return trace.WriteMetricsFile(trace.MetricsPath(path), m.Info, m.Metrics)
	}
	return nil
}
