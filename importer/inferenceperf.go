package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kubernetes' inference-perf writes, per run, stage_N_lifecycle_metrics.json (one
// per load stage: load_summary{count, requested_rate, concurrency, send_duration,
// achieved_rate} and successes.{latency.{time_to_first_token, request_latency,
// time_per_output_token, inter_token_latency}.{mean, median, pN}, throughput}),
// summary_lifecycle_metrics.json (all stages together) and, only when the config
// sets report.request_lifecycle.per_request: true, per_request_lifecycle_metrics.json:
// a JSON list of {start_time, end_time, request, response, info, error}, times in
// seconds of time.perf_counter() (a monotonic clock, not epoch). info is
// {input_tokens, output_tokens, output_token_times} in older releases and
// {request_metrics.text.input_tokens, response_metrics.{output_tokens,
// output_token_times, chunk_times, server_usage}} in newer ones. Tokens of one
// chunk share its arrival time in output_token_times.
//
// Each stage is one level: a stage with a requested_rate is open loop (a rate
// level), one with a concurrency closed loop. The per-request list does not say
// which stage a request belongs to unless it carries stage_id; stages run one after
// another, so the requests, in send order, are split by the stages' counts.

const (
	ipPerRequest = "per_request_lifecycle_metrics.json"
	ipSummary    = "summary_lifecycle_metrics.json"
)

var ipStageFile = regexp.MustCompile(`^stage_(\d+)_lifecycle_metrics\.json$`)

// ipStage is one stage summary.
type ipStage struct {
	index int
	file  string
	count int
	rate  float64
	conc  int
	refs  []Reference
}

// readInferencePerf reads an inference-perf results directory or its
// per_request_lifecycle_metrics.json (the stage summaries are read from beside it).
func readInferencePerf(path string) (*Run, error) {
	dir, perReq := path, filepath.Join(path, ipPerRequest)
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	} else if !st.IsDir() {
		dir, perReq = filepath.Dir(path), path
	}
	stages, err := ipStages(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(perReq); err != nil {
		what := "the directory has no " + ipPerRequest
		if perReq == path {
			what = "this is an inference-perf stage or run summary"
		}
		return nil, fmt.Errorf("%s: %w: %s; inference-perf writes per-request records only when its config sets report.request_lifecycle.per_request: true", path, ErrSummaryOnly, what)
	}
	data, err := os.ReadFile(perReq)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", perReq, err)
	}
	name := filepath.Base(perReq)
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return nil, fmt.Errorf("%s: %w: this is an inference-perf stage or run summary; the per-request records are in %s, written when the config sets report.request_lifecycle.per_request: true: import that file or the results directory", name, ErrSummaryOnly, ipPerRequest)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(lenient(data), &items); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON (want a list of request records): %v", name, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: %w: the list of requests is empty", name, ErrSummaryOnly)
	}
	run := &Run{Tool: FromInferencePerf, Files: []string{perReq}}
	type rec struct {
		start   float64
		stageID int
		hasID   bool
		r       Request
	}
	recs := make([]rec, 0, len(items))
	for i, raw := range items {
		o, err := decodeObject(fmt.Sprintf("%s element %d", name, i), raw)
		if err != nil {
			return nil, err
		}
		start, r, err := ipRequest(o)
		if err != nil {
			return nil, err
		}
		id, hasID, err := o.int("stage_id")
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec{start, id, hasID, r})
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].start < recs[j].start })
	t0 := recs[0].start
	for i := range recs {
		recs[i].r.SentNs = secondsToNs(recs[i].start - t0)
	}

	// Stage membership: stage_id when every record has one, else the stages' counts
	// in send order, else one level.
	byStage := map[int][]Request{}
	allIDs := true
	for _, r := range recs {
		allIDs = allIDs && r.hasID
	}
	total := 0
	for _, s := range stages {
		total += s.count
	}
	switch {
	case allIDs:
		for _, r := range recs {
			byStage[r.stageID] = append(byStage[r.stageID], r.r)
		}
	case len(stages) > 0 && total == len(recs):
		k := 0
		for _, s := range stages {
			for range s.count {
				byStage[s.index] = append(byStage[s.index], recs[k].r)
				k++
			}
		}
		if len(stages) > 1 {
			run.Warnings = append(run.Warnings, fmt.Sprintf("%s names no stage per request: the %d requests, in send order, were split by the %d stage summaries' counts (stages run one after another)", name, len(recs), len(stages)))
		}
	default:
		if len(stages) > 0 {
			run.Warnings = append(run.Warnings, fmt.Sprintf("%s holds %d requests but the stage summaries count %d: imported as one level", name, len(recs), total))
		}
		stages = nil
		for _, r := range recs {
			byStage[-1] = append(byStage[-1], r.r)
		}
	}
	known := map[int]*ipStage{}
	for i := range stages {
		known[stages[i].index] = &stages[i]
		run.Files = append(run.Files, stages[i].file)
	}
	ids := make([]int, 0, len(byStage))
	for id := range byStage {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		lv := Level{Requests: byStage[id], Label: fmt.Sprintf("%s stage %d", name, id)}
		if id < 0 {
			lv.Label = name
		}
		if s := known[id]; s != nil {
			lv.Rate, lv.Concurrency, lv.References = s.rate, s.conc, s.refs
			lv.Label = fmt.Sprintf("stage %d (%s)", id, filepath.Base(s.file))
			if s.count != len(lv.Requests) {
				run.Warnings = append(run.Warnings, fmt.Sprintf("%s: counts %d requests, %s has %d for it", filepath.Base(s.file), s.count, name, len(lv.Requests)))
			}
		}
		if lv.Rate == 0 && lv.Concurrency == 0 {
			lv.Concurrency = peakInFlight(lv.Requests)
			run.Warnings = append(run.Warnings, fmt.Sprintf("%s: the load setting is unknown (no stage summary with requested_rate or concurrency): placed at the peak measured concurrency %d", lv.Label, lv.Concurrency))
		}
		if lv.Rate == 0 {
			assignWorkers(lv.Requests)
		}
		run.Levels = append(run.Levels, lv)
	}
	run.Missing = appendNew(run.Missing,
		"absolute send times (inference-perf's clock is time.perf_counter(): offsets from the first send are kept)",
		"the scheduled send time of open-loop requests (not in the per-request file)",
		"the inference-perf version")
	return run, nil
}

// ipRequest reads one per-request record: its start (perf_counter seconds) and the
// request with SentNs still unset.
func ipRequest(o object) (float64, Request, error) {
	r := Request{Status: 200}
	start, ok, err := o.float("start_time")
	if err != nil {
		return 0, r, err
	}
	if !ok {
		return 0, r, o.fieldErr("start_time", "missing")
	}
	end, ok, err := o.float("end_time")
	if err != nil {
		return 0, r, err
	}
	if !ok || end < start {
		return 0, r, o.fieldErr("end_time", "missing or before start_time")
	}
	info, hasInfo, err := o.obj("info")
	if err != nil {
		return 0, r, err
	}
	var resp object
	hasResp := false
	var usage object
	hasUsage := false
	if hasInfo {
		if resp, hasResp, err = info.obj("response_metrics"); err != nil {
			return 0, r, err
		}
		if !hasResp {
			resp, hasResp = info, true // the older flat info
		}
		if usage, hasUsage, err = resp.obj("server_usage"); err != nil {
			return 0, r, err
		}
		if hasUsage {
			if v, ok, _ := usage.int("prompt_tokens"); ok {
				r.Prompt = ptrTo(v)
			}
		}
		if r.Prompt == nil {
			if v, ok, err := info.int("input_tokens"); err != nil {
				return 0, r, err
			} else if ok {
				r.Prompt = ptrTo(v)
			}
		}
	}
	if e, ok, err := o.obj("error"); err != nil {
		return 0, r, err
	} else if ok {
		typ, msg := e.text("error_type"), e.text("error_msg")
		r.Status = 0
		if code, found := strings.CutPrefix(typ, "HTTP Error "); found {
			if c, err := strconv.Atoi(strings.TrimSpace(code)); err == nil {
				r.Status = c
			}
		}
		r.Err = strings.TrimSpace(strings.TrimSpace(typ) + ": " + msg)
		e2e := end - start
		r.E2E = &e2e
		return start, r, nil
	}
	if !hasResp {
		return 0, r, o.fieldErr("info", "missing on a request without an error")
	}
	times, ok, err := resp.floats("output_token_times")
	if err != nil {
		return 0, r, err
	}
	if !ok || len(times) == 0 {
		return 0, r, resp.fieldErr("output_token_times", "missing or empty on a request without an error: the run was not streamed, so its TTFT is unknown (set api.streaming: true)")
	}
	ttft := times[0] - start
	e2e := end - start
	if ttft < 0 || times[len(times)-1] > end+1e-6 {
		return 0, r, resp.fieldErr("output_token_times", "outside [start_time, end_time]")
	}
	r.TTFT, r.E2E = &ttft, &e2e
	// Tokens of one chunk share its time: the distinct times are the chunks.
	last := times[0]
	for _, t := range times[1:] {
		if t != last {
			r.Gaps = append(r.Gaps, t-last)
			last = t
		}
	}
	if hasUsage {
		if v, ok, _ := usage.int("completion_tokens"); ok {
			r.Output = ptrTo(v)
		}
	}
	if r.Output == nil {
		if v, ok, err := resp.int("output_tokens"); err != nil {
			return 0, r, err
		} else if ok {
			r.Output = ptrTo(v)
		}
	}
	return start, r, nil
}

// ipStages reads the stage summaries of dir, ordered by stage index.
func ipStages(dir string) ([]ipStage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var out []ipStage
	for _, e := range entries {
		m := ipStageFile.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		idx, _ := strconv.Atoi(m[1])
		f := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		s, err := ipStageSummary(e.Name(), data)
		if err != nil {
			return nil, err
		}
		s.index, s.file = idx, f
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out, nil
}

func ipStageSummary(name string, data []byte) (ipStage, error) {
	var s ipStage
	o, err := decodeObject(name, data)
	if err != nil {
		return s, err
	}
	ls, ok, err := o.obj("load_summary")
	if err != nil {
		return s, err
	}
	if !ok {
		return s, o.fieldErr("load_summary", "missing: not an inference-perf stage summary")
	}
	if s.count, ok, err = ls.int("count"); err != nil {
		return s, err
	} else if !ok {
		return s, ls.fieldErr("count", "missing")
	}
	if s.rate, _, err = ls.float("requested_rate"); err != nil {
		return s, err
	}
	if s.conc, _, err = ls.int("concurrency"); err != nil {
		return s, err
	}
	if s.conc > 0 {
		s.rate = 0 // a concurrency stage also states the rate its sender ran at
	}
	if math.IsInf(s.rate, 0) || math.IsNaN(s.rate) || s.rate < 0 {
		return s, ls.fieldErr("requested_rate", "%g is not a rate", s.rate)
	}
	succ, ok, err := o.obj("successes")
	if err != nil || !ok {
		return s, err
	}
	if n, ok, _ := succ.float("count"); ok {
		s.refs = append(s.refs, Reference{Metric: "requests", Stat: "value", Value: n, Key: "successes.count"})
	}
	if lat, ok, _ := succ.obj("latency"); ok {
		for _, m := range [][2]string{{"time_to_first_token", "ttft"}, {"request_latency", "e2e"}, {"time_per_output_token", "tpot"}, {"inter_token_latency", "itl"}} {
			st, ok, err := lat.obj(m[0])
			if err != nil {
				return s, err
			}
			if !ok {
				continue
			}
			for _, k := range [][2]string{{"mean", "mean"}, {"median", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}} {
				if v, ok, _ := st.float(k[0]); ok {
					s.refs = append(s.refs, Reference{Metric: m[1], Stat: k[1], Value: v, Key: "successes.latency." + m[0] + "." + k[0]})
				}
			}
		}
	}
	if tp, ok, _ := succ.obj("throughput"); ok {
		for _, t := range [][2]string{{"output_tokens_per_sec", "output_tok_s"}, {"requests_per_sec", "request_s"}} {
			if v, ok, _ := tp.float(t[0]); ok {
				s.refs = append(s.refs, Reference{Metric: t[1], Stat: "value", Value: v, Key: "successes.throughput." + t[0]})
			}
		}
	}
	return s, nil
}

// FromInferencePerf is Kubernetes' inference-perf.
const FromInferencePerf = "inference-perf"

// inferencePerfTool is Kubernetes' inference-perf: its per-request lifecycle
// metrics, or the results directory holding them. A stage or run summary is
// detected so that readInferencePerf can refuse it with what to import.
func inferencePerfTool() tool {
	return tool{
		name:       FromInferencePerf,
		detectRank: 40,
		detect: func(h head) (bool, error) {
			return (h.isList() && h.has("start_time") && h.has("end_time") && h.has("info")) ||
				(h.isObject() && h.has("load_summary") && h.has("successes")), nil
		},
		dirEntry: func(name string) bool {
			return name == ipPerRequest || name == ipSummary || ipStageFile.MatchString(name)
		},
		read: readInferencePerf,
		note: func(r Reference) string {
			switch r.Metric {
			case "tpot":
				return "inference-perf's TPOT is (last token time − first token time)/(output − 1); ceiling's is (E2E − TTFT)/(output − 1), and E2E ends after the stream's final chunk"
			case "itl":
				return "inference-perf pools per-token gaps, 0 for the tokens that share a chunk; ceiling pools the gaps between chunks"
			case "output_tok_s", "request_s":
				return "inference-perf divides by the stage's first send to last end; ceiling uses the steady-state window"
			}
			return ""
		},
	}
}
