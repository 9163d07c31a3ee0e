package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// NVIDIA AIPerf writes profile_export.jsonl (one record per request: metadata
// with epoch-ns timestamps, metrics as {value, unit}, an error object on failures)
// and the summary profile_export_aiperf.json beside it. The summary has two
// schemas: 0.1.x nests the metrics under "records" by tag (TTFT is "ttft"); 0.8
// puts them at the top level (TTFT is "time_to_first_token") and adds
// aiperf_version. The load settings are in the summary's input_config.

// aiperfSummaryPath is the summary beside a per-record export.
func aiperfSummaryPath(jsonl string) string {
	return strings.TrimSuffix(jsonl, ".jsonl") + "_aiperf.json"
}

// aiperfRecordsPath is the per-record export beside a summary (.json or .csv).
func aiperfRecordsPath(summary string) string {
	s := filepath.Clean(summary)
	for _, suf := range []string{"_aiperf.json", "_aiperf.csv"} {
		if strings.HasSuffix(s, suf) {
			return strings.TrimSuffix(s, suf) + ".jsonl"
		}
	}
	return s
}

// readAIPerf reads an AIPerf profile_export.jsonl and the summary beside it.
func readAIPerf(path string) (*Run, error) {
	name := filepath.Base(path)
	if !strings.HasSuffix(path, ".jsonl") {
		return nil, fmt.Errorf("%s: %w: this is AIPerf's summary; the per-request records are in the profile_export.jsonl written beside it: import that file", name, ErrSummaryOnly)
	}
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: %w: the file has no records", name, ErrSummaryOnly)
	}
	run := &Run{Tool: FromAIPerf, Files: []string{path}}
	lv := Level{Label: name}
	for i, l := range lines {
		o, err := decodeObject(fmt.Sprintf("%s line %d", name, i+1), l)
		if err != nil {
			return nil, err
		}
		r, err := aiperfRequest(o)
		if err != nil {
			return nil, err
		}
		lv.Requests = append(lv.Requests, r)
	}

	sumPath := aiperfSummaryPath(path)
	if data, err := os.ReadFile(sumPath); err == nil {
		run.Files = append(run.Files, sumPath)
		if err := aiperfSummary(run, &lv, filepath.Base(sumPath), data); err != nil {
			return nil, err
		}
	} else {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: no summary %s beside it: the load settings and AIPerf's own numbers are unknown", name, filepath.Base(sumPath)))
	}
	if lv.Concurrency == 0 && lv.Rate == 0 {
		lv.Concurrency = peakInFlight(lv.Requests)
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: the load setting is unknown: the level is placed at the peak measured concurrency %d", name, lv.Concurrency))
	}
	if lv.Rate == 0 {
		assignWorkers(lv.Requests)
	}
	run.Missing = appendNew(run.Missing, "time to first content chunk, finish reasons, cached tokens")
	run.Levels = append(run.Levels, lv)
	return run, nil
}

// aiperfValue returns metric k of a record in seconds (time units) or as is.
func aiperfValue(m object, k string) (v float64, ok bool, err error) {
	sub, ok, err := m.obj(k)
	if err != nil || !ok {
		return 0, ok, err
	}
	unit, _, _ := sub.str("unit")
	v, ok, err = sub.float("value")
	if err != nil || !ok {
		return 0, ok, err
	}
	return v * unitScale(unit), true, nil
}

func unitScale(unit string) float64 {
	switch strings.ToLower(unit) {
	case "ms":
		return 1e-3
	case "us", "µs":
		return 1e-6
	case "ns":
		return 1e-9
	}
	return 1
}

func aiperfRequest(o object) (Request, error) {
	r := Request{Status: 200}
	md, ok, err := o.obj("metadata")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("metadata", "missing: not an AIPerf profile_export.jsonl record")
	}
	m, ok, err := o.obj("metrics")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("metrics", "missing: not an AIPerf profile_export.jsonl record")
	}
	start, hasStart, err := md.int("request_start_ns")
	if err != nil {
		return r, err
	}
	if !hasStart {
		if start, hasStart, err = md.int("timestamp_ns"); err != nil {
			return r, err
		}
	}
	if !hasStart {
		return r, fmt.Errorf("%s: no send time (metadata.request_start_ns or metadata.timestamp_ns)", o.where)
	}
	r.SentNs = int64(start)
	phase := md.text("benchmark_phase") + md.text("credit_phase")
	r.Warmup = strings.Contains(phase, "warmup")
	end, hasEnd, err := md.int("request_end_ns")
	if err != nil {
		return r, err
	}
	if hasEnd {
		r.E2E = ptrTo(float64(int64(end)-r.SentNs) / 1e9)
	}
	if lat, ok, err := aiperfValue(m, "request_latency"); err != nil {
		return r, err
	} else if ok {
		r.E2E = &lat
	}
	for _, t := range []struct {
		key string
		dst **int
	}{{"input_sequence_length", &r.Prompt}, {"output_sequence_length", &r.Output}, {"reasoning_token_count", &r.Reasoning}} {
		if v, ok, err := aiperfValue(m, t.key); err != nil {
			return r, err
		} else if ok {
			*t.dst = ptrTo(int(v))
		}
	}
	if e, ok, err := o.obj("error"); err != nil {
		return r, err
	} else if ok {
		r.Status = 0
		if c, ok, _ := e.int("code"); ok {
			r.Status = c
		}
		r.Err = strings.TrimSpace(e.text("type") + ": " + e.text("message"))
		if isl, ok, _ := aiperfValue(m, "error_isl"); ok {
			r.Prompt = ptrTo(int(isl))
		}
		return r, nil
	}
	ttft, ok, err := aiperfValue(m, "ttft")
	if err != nil {
		return r, err
	}
	if !ok {
		if ttft, ok, err = aiperfValue(m, "time_to_first_token"); err != nil {
			return r, err
		}
	}
	if !ok {
		return r, m.fieldErr("ttft", "missing on a record without an error (was the run not streaming?)")
	}
	r.TTFT = &ttft
	if icl, ok, err := m.obj("inter_chunk_latency"); err != nil {
		return r, err
	} else if ok {
		unit, _, _ := icl.str("unit")
		gaps, _, err := icl.floats("value")
		if err != nil {
			return r, err
		}
		s := unitScale(unit)
		for i := range gaps {
			gaps[i] *= s
		}
		r.Gaps = gaps
	}
	if r.E2E == nil {
		return r, m.fieldErr("request_latency", "missing, and metadata has no request_end_ns")
	}
	return r, nil
}

// aiperfSummary reads the load settings, version and AIPerf's own numbers.
func aiperfSummary(run *Run, lv *Level, name string, data []byte) error {
	s, err := decodeObject(name, data)
	if err != nil {
		return err
	}
	metrics := s
	if rec, ok, err := s.obj("records"); err != nil {
		return err
	} else if ok {
		metrics = rec // 0.1.x schema
		run.Missing = appendNew(run.Missing, "the AIPerf version (the 0.1.x summary schema does not record it)")
	} else if v, ok, _ := s.str("aiperf_version"); ok {
		run.ToolVersion = v
	}
	if ic, ok, err := s.obj("input_config"); err != nil {
		return err
	} else if ok {
		if ep, ok, _ := ic.obj("endpoint"); ok {
			if names, ok, _ := ep.strs("model_names"); ok && len(names) > 0 {
				run.Model = names[0]
			}
			if u, ok, _ := ep.str("url"); ok {
				run.BaseURL = u
			} else if us, ok, _ := ep.strs("urls"); ok && len(us) > 0 {
				run.BaseURL = us[0]
			}
			if t, ok, _ := ep.str("type"); ok && (t == "chat" || t == "completions") {
				run.Endpoint = t
			}
		}
		if lg, ok, _ := ic.obj("loadgen"); ok {
			if c, ok, err := lg.int("concurrency"); err != nil {
				return err
			} else if ok {
				lv.Concurrency = c
			}
			if r, ok, err := lg.float("request_rate"); err != nil {
				return err
			} else if ok && r > 0 {
				lv.Rate, lv.Concurrency = r, 0
			}
		}
	}
	if d, ok := aiperfStat(metrics, "benchmark_duration", "avg"); ok {
		lv.DurationS = d
	}
	tags := []struct{ tag, metric string }{
		{"ttft", "ttft"}, {"time_to_first_token", "ttft"},
		{"inter_token_latency", "tpot"}, {"inter_chunk_latency", "itl"},
		{"request_latency", "e2e"},
	}
	stats := [][2]string{{"avg", "mean"}, {"p50", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}}
	for _, t := range tags {
		for _, st := range stats {
			if v, ok := aiperfStat(metrics, t.tag, st[0]); ok {
				lv.References = append(lv.References, Reference{Metric: t.metric, Stat: st[1], Value: v, Key: t.tag + "." + st[0]})
			}
		}
	}
	for _, t := range [][2]string{{"output_token_throughput", "output_tok_s"}, {"request_throughput", "request_s"}, {"request_count", "requests"}} {
		if v, ok := aiperfStat(metrics, t[0], "avg"); ok {
			lv.References = append(lv.References, Reference{Metric: t[1], Stat: "value", Value: v, Key: t[0] + ".avg"})
		}
	}
	sort.SliceStable(lv.References, func(i, j int) bool { return lv.References[i].Metric < lv.References[j].Metric })
	return nil
}

// aiperfStat is one statistic of a summary metric, in seconds for time units.
func aiperfStat(metrics object, tag, stat string) (float64, bool) {
	m, ok, err := metrics.obj(tag)
	if err != nil || !ok {
		return 0, false
	}
	v, ok, err := m.float(stat)
	if err != nil || !ok {
		return 0, false
	}
	unit, _, _ := m.str("unit")
	if strings.Contains(unit, "/") { // tokens/sec, requests/sec: rates as they are
		return v, true
	}
	return v * unitScale(unit), true
}

// peakInFlight is the largest number of requests in flight at once.
func peakInFlight(reqs []Request) int {
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(reqs))
	for i := range reqs {
		evs = append(evs, ev{reqs[i].SentNs, 1}, ev{reqs[i].SentNs + endOffsetNs(&reqs[i]), -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].d < evs[j].d
	})
	peak, cur := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	return max(peak, 1)
}

// FromAIPerf is NVIDIA AIPerf.
const FromAIPerf = "aiperf"

// aiperfTool is NVIDIA AIPerf: its per-record export, or its summary (JSON or CSV),
// which is read with the records beside it.
func aiperfTool() tool {
	return tool{
		name:       FromAIPerf,
		detectRank: 70,
		detect: func(h head) (bool, error) {
			if bytes.HasPrefix(h, []byte("Metric,")) {
				return true, nil // AIPerf's CSV summary; readAIPerf says where the records are
			}
			return h.isJSON() && ((h.has("metadata") && h.has("metrics") && h.has("x_request_id", "credit_phase", "benchmark_phase")) ||
				h.has("aiperf_version") || (h.has("records") && h.has("input_config"))), nil
		},
		read: readAIPerf,
		readWithRecords: func(path string, given func(string) bool) bool {
			return given(aiperfRecordsPath(path)) && !strings.HasSuffix(path, ".jsonl")
		},
		note: func(r Reference) string {
			switch r.Metric {
			case "itl":
				return "AIPerf's inter-chunk statistics may pool or average the gaps differently from ceiling's pooled per-chunk gaps"
			case "output_tok_s", "request_s":
				return "AIPerf divides by its benchmark duration; ceiling uses the steady-state window"
			}
			return ""
		},
	}
}
