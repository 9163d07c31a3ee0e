package shard

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
	parquet "github.com/parquet-go/parquet-go"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// shardInput is shard i of n of a closed-loop sweep at concurrency c: each of its
// workers sends back-to-back requests of one second from start for dur seconds,
// with busy workers of them actually sending (the rest idle: a slow shard).
type shardSpec struct {
	index, count, c int
	start           [2]time.Duration // each level's start after t0
	busy            int              // workers that send (-1: all)
	offset          time.Duration    // clock offset measured (0: not measured)
}

func shardInput(s shardSpec) Input {
	sp := Spec{Index: s.index, Count: s.count}
	info := trace.RunInfo{Tool: "ceiling", RunID: "run-1", Started: t0,
		Target: trace.Target{BaseURL: "http://127.0.0.1:1", Endpoint: "chat", Model: "m"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: []int{s.c, s.c}, DurationPerLevelS: 20, Seed: 7},
		Shard:  &trace.ShardInfo{Index: s.index, Count: s.count},
		Client: trace.ClientInfo{Hostname: "pod-" + string(rune('a'+s.index))}}
	if s.offset != 0 {
		info.Shard.ClockOffsetNs, info.Shard.ClockUncertaintyNs = int64(s.offset), int64(10*time.Millisecond)
	}
	var rows []trace.Row
	id := sp.RequestIDBase()
	for lv := range 2 {
		start := t0.Add(s.start[lv])
		w := sp.Workers(s.c)
		busy := w
		if s.busy >= 0 {
			busy = s.busy
		}
		n := 0
		for wk := range busy {
			for k := range 20 {
				sent := start.Add(time.Duration(k) * time.Second).UnixNano()
				rows = append(rows, trace.Row{RunID: "run-1", Level: int32(lv), Concurrency: int32(s.c), RequestID: id,
					Worker: int32(sp.WorkerBase(s.c) + wk), SentNs: sent, ScheduledNs: sent, EndNs: sent + int64(time.Second) - 1})
				id++
				n++
			}
		}
		info.Levels = append(info.Levels, trace.LevelInfo{Level: lv, Concurrency: s.c, Started: start, Ended: start.Add(20 * time.Second),
			Requests: n, Rows: n, Workers: w})
	}
	info.Ended = t0.Add(time.Minute)
	return Input{Name: filepathName(s.index), Info: info, Rows: rows}
}

func filepathName(i int) string {
	return filepath.Join("traces", "shard-"+string(rune('0'+i))+".parquet")
}

func threeShards() []Input {
	var ins []Input
	for i := range 3 {
		ins = append(ins, shardInput(shardSpec{index: i, count: 3, c: 6, start: [2]time.Duration{0, 30 * time.Second}, busy: -1}))
	}
	return ins
}

func TestMergeUnitesRowsAndLevels(t *testing.T) {
	m, err := Merge(threeShards())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 3*2*2*20 {
		t.Errorf("%d rows, want %d", len(m.Rows), 3*2*2*20)
	}
	if len(m.Info.Levels) != 2 || m.Info.Levels[0].Requests != 120 || m.Info.Levels[0].Concurrency != 6 || m.Info.Levels[0].Workers != 0 {
		t.Errorf("merged levels %+v", m.Info.Levels)
	}
	seen := map[int64]bool{}
	workers := map[int32]bool{}
	for _, r := range m.Rows {
		if seen[r.RequestID] {
			t.Fatalf("request id %d twice", r.RequestID)
		}
		seen[r.RequestID] = true
		if r.Level == 0 {
			workers[r.Worker] = true
		}
	}
	if len(workers) != 6 {
		t.Errorf("%d distinct workers at level 0, want 6", len(workers))
	}
	// Shards that ran together leave only the note that their clocks were not
	// measured against the server's.
	if len(m.Findings) != 1 || m.Findings[0].Kind != "clock" {
		t.Errorf("findings on shards that ran together: %v", m.Findings)
	}
	if s := m.Info.Shard; s == nil || s.Count != 3 || len(s.Merged) != 3 {
		t.Errorf("merged shard info %+v", s)
	}
}

func TestMergeNamesLateAndSlowShards(t *testing.T) {
	ins := threeShards()
	ins[2] = shardInput(shardSpec{index: 2, count: 3, c: 6, start: [2]time.Duration{0, 36 * time.Second}, busy: -1})
	ins[1] = shardInput(shardSpec{index: 1, count: 3, c: 6, start: [2]time.Duration{0, 30 * time.Second}, busy: 1})
	m, err := Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	var late, slow bool
	for _, f := range m.Findings {
		if f.Kind == "late" && f.Shard == 2 && f.Level == 1 {
			late = true
		}
		if f.Kind == "slow" && f.Shard == 1 {
			slow = true
		}
		if f.Kind == "late" && f.Shard != 2 {
			t.Errorf("shard %d called late: %s", f.Shard, f)
		}
	}
	if !late || !slow {
		t.Errorf("late shard 2 named: %v; slow shard 1 named: %v; findings %v", late, slow, m.Findings)
	}
	if !strings.Contains(strings.Join(m.Info.Warnings, "\n"), "shard 2 started 6.0 s after") {
		t.Errorf("the warnings do not carry the finding: %v", m.Info.Warnings)
	}
}

func TestMergeHardlyOverlapping(t *testing.T) {
	ins := threeShards()
	ins[0] = shardInput(shardSpec{index: 0, count: 3, c: 6, start: [2]time.Duration{0, 45 * time.Second}, busy: -1})
	m, err := Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range m.Findings {
		found = found || (f.Kind == "overlap" && f.Level == 1)
	}
	if !found {
		t.Errorf("windows overlapping 5 s of 20 not reported: %v", m.Findings)
	}
}

func TestMergeClockCorrection(t *testing.T) {
	var ins []Input
	for i := range 2 {
		// Shard 1's clock is 5 s behind the server's and so started 5 s "early" by
		// its own clock: on the server's clock both started together.
		off := time.Duration(i+1) * time.Millisecond
		start := [2]time.Duration{0, 30 * time.Second}
		if i == 1 {
			off = 5 * time.Second
			start = [2]time.Duration{-5 * time.Second, 25 * time.Second}
		}
		ins = append(ins, shardInput(shardSpec{index: i, count: 2, c: 4, start: start, busy: -1, offset: off}))
	}
	m, err := Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Findings {
		if f.Kind == "late" || f.Kind == "overlap" {
			t.Errorf("after the clock correction: %s", f)
		}
	}
	if got := m.Info.Shard.Merged[1].ClockOffsetNs; got != int64(5*time.Second) {
		t.Errorf("shard 1's correction %d, want 5 s", got)
	}
}

func TestMergeRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func([]Input) []Input
		want   string
	}{
		{"missing shard", func(in []Input) []Input { return in[:2] }, "shards 2 of 3 are missing"},
		{"duplicate", func(in []Input) []Input { in[2] = in[1]; in[2].Name = "copy"; return in }, "are both shard 1"},
		{"other run", func(in []Input) []Input { in[1].Info.RunID = "run-2"; return in }, "belongs to run run-2"},
		{"other plan", func(in []Input) []Input { in[1].Info.Plan.Seed = 8; return in }, "another plan"},
		{"other server", func(in []Input) []Input { in[2].Info.Target.BaseURL = "http://other"; return in }, "load one server"},
		{"not a shard", func(in []Input) []Input { in[0].Info.Shard = nil; return in }, "not a shard's trace"},
		{"other count", func(in []Input) []Input { in[1].Info.Shard = &trace.ShardInfo{Index: 1, Count: 4}; return in }, "a shard of 4"},
		{"nothing", func([]Input) []Input { return nil }, "no shard given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.change(threeShards()))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestMergeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var ins []Input
	for i, in := range threeShards() {
		p := filepath.Join(dir, filepathName(i)[len("traces/"):])
		if err := trace.WriteFile(p, in.Info, in.Rows); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			samples := []trace.MetricSample{{TsNs: t0.UnixNano(), Name: "vllm:num_requests_running", Value: 6}}
			if err := trace.WriteMetricsFile(trace.MetricsPath(p), in.Info, samples); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, got)
	}
	m, err := Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.parquet")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	info, rows, err := trace.ReadFile(out)
	if err != nil || len(rows) != 240 || info.Shard == nil || len(info.Shard.Merged) != 3 {
		t.Fatalf("merged file: %d rows, shard %+v, %v", len(rows), info.Shard, err)
	}
	_, samples, err := trace.ReadMetricsFile(trace.MetricsPath(out))
	if err != nil || len(samples) != 1 {
		t.Fatalf("merged sidecar: %d samples, %v", len(samples), err)
	}
}

// Issue 31 item 10: a forged clock offset (or uncertainty) is refused naming the
// shard's file and the field, before any time is moved by it; an offset within
// the bound that would still carry a time past int64 is refused too. Before, an
// offset of 9e18 ns overflowed the times: a window of -8,999,999,997 s, exit 0.
func TestMergeRefusesForgedClockOffset(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*trace.ShardInfo, []trace.Row)
		want   string
	}{
		{"offset 9e18 ns", func(s *trace.ShardInfo, _ []trace.Row) { s.ClockOffsetNs = 9e18 }, "shard.clock_offset_ns is 9000000000000000000"},
		{"offset -9e18 ns", func(s *trace.ShardInfo, _ []trace.Row) { s.ClockOffsetNs = -9e18 }, "shard.clock_offset_ns is -9000000000000000000"},
		{"offset 25 h", func(s *trace.ShardInfo, _ []trace.Row) { s.ClockOffsetNs = int64(25 * time.Hour) }, "beyond ±24h0m0s"},
		{"negative uncertainty", func(s *trace.ShardInfo, _ []trace.Row) { s.ClockUncertaintyNs = -1 }, "shard.clock_uncertainty_ns is -1"},
		{"a time near int64's end", func(s *trace.ShardInfo, rows []trace.Row) {
			s.ClockOffsetNs = int64(time.Hour)
			rows[3].EndNs = math.MaxInt64 - 5
		}, "past what int64 nanoseconds hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ins []Input
			for i := range 2 {
				ins = append(ins, shardInput(shardSpec{index: i, count: 2, c: 4, start: [2]time.Duration{0, 30 * time.Second}, busy: -1, offset: time.Millisecond}))
			}
			c.change(ins[1].Info.Shard, ins[1].Rows)
			_, err := Merge(ins)
			if err == nil || !strings.Contains(err.Error(), ins[1].Name) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s and saying %q", err, ins[1].Name, c.want)
			}
		})
	}
}

// Issue 31 item 9, merge: a shard trace without a checksum is not laundered into
// a merged file that looks verified: the merged run's warnings (which the
// analysis shows) name the file read unverified. Before, the merged file carried
// a fresh, valid checksum and not a word.
func TestMergeCarriesUnverifiedThrough(t *testing.T) {
	dir := t.TempDir()
	var ins []Input
	bare := ""
	for i, in := range threeShards() {
		p := filepath.Join(dir, filepathName(i)[len("traces/"):])
		if i == 1 {
			bare = p
			writeWithoutChecksum(t, p, in.Info, in.Rows)
		} else if err := trace.WriteFile(p, in.Info, in.Rows); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, got)
	}
	m, err := Merge(ins)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.parquet")
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	info, err := trace.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(info.Warnings, "\n")
	if !strings.Contains(w, bare+" carries no checksum") || strings.Count(w, "carries no checksum") != 1 {
		t.Errorf("the merged run's warnings %q do not name %s (alone) as read unverified", info.Warnings, bare)
	}
}

// writeWithoutChecksum writes a trace as a tool that knows no ceiling.digest does:
// the schema version and run info, no checksum.
func writeWithoutChecksum(t *testing.T, path string, info trace.RunInfo, rows []trace.Row) {
	t.Helper()
	raw, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[trace.Row](f, parquet.KeyValueMetadata(trace.MetaSchemaVersion, "2"), parquet.KeyValueMetadata(trace.MetaRun, string(raw)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
