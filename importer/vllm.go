package importer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/engine"
)

// vLLM `bench serve --save-result` (benchmarks/benchmark_serving.py or
// vllm.benchmarks.serve): one JSON object per file, or one per line with
// --append-result. The per-request arrays (ttfts, itls, input_lens, output_lens,
// errors; start_times in newer versions) are in seconds and written only with
// --save-detailed; the summary numbers (*_ms) are in ms.

// readVLLM reads a vLLM result file (.json or --append-result JSON Lines).
func readVLLM(path string) (*Run, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	run := &Run{Tool: FromVLLM, Files: []string{path}}
	for _, o := range objs {
		if err := addBenchLevel(run, o, vllmKeys, o.where); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// readObjects reads a file holding one JSON object, or one object per line.
func readObjects(path string) ([]object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	name := filepath.Base(path)
	if o, err := decodeObject(name, data); err == nil {
		return []object{o}, nil
	}
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty file", name)
	}
	out := make([]object, 0, len(lines))
	for i, l := range lines {
		o, err := decodeObject(fmt.Sprintf("%s line %d", name, i+1), l)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// benchKeys are the names one tool uses in a vLLM-style result object.
type benchKeys struct {
	tool    string
	e2e     string // summary name of E2E latency: "e2el" (vLLM), "e2e_latency" (SGLang)
	hint    string // how to get per-request arrays from the tool
	metrics []string
}

var vllmKeys = benchKeys{
	tool: FromVLLM, e2e: "e2el",
	hint:    "re-run `vllm bench serve` (or benchmark_serving.py) with --save-result --save-detailed",
	metrics: []string{"ttft", "tpot", "itl", "e2el"},
}

var sglangKeys = benchKeys{
	tool: FromSGLang, e2e: "e2e_latency",
	hint:    "re-run `python -m sglang.bench_serving` with --output-file and --output-details",
	metrics: []string{"ttft", "tpot", "itl", "e2e_latency"},
}

// addBenchLevel turns one result object of vLLM or SGLang into a level of run.
func addBenchLevel(run *Run, o object, k benchKeys, label string) error {
	ttfts, hasTTFT, err := o.floats("ttfts")
	if err != nil {
		return err
	}
	if !hasTTFT {
		for _, need := range []string{"duration", "completed"} {
			if !o.has(need) {
				return fmt.Errorf("%s: not a %s result: field %q is missing", o.where, k.tool, need)
			}
		}
		msg := fmt.Sprintf("%s: %%w: the file holds only %s's summary, no per-request arrays (ttfts, itls, ...); %s", o.where, k.tool, k.hint)
		if c, ok, _ := o.int("completed"); ok && c == 0 {
			msg = fmt.Sprintf("%s: %%w: the file holds only %s's summary, and every request failed (completed 0); %s", o.where, k.tool, k.hint)
		}
		return fmt.Errorf(msg, ErrSummaryOnly)
	}
	itls, ok, err := o.floatLists("itls")
	if err != nil {
		return err
	}
	if !ok {
		return o.fieldErr("itls", "missing (ttfts is present, so the file is a detailed result without its gaps)")
	}
	n := len(ttfts)
	lens := map[string]int{"itls": len(itls)}
	ins, hasIn, err := o.floats("input_lens")
	if err != nil {
		return err
	}
	if hasIn {
		lens["input_lens"] = len(ins)
	}
	outs, hasOut, err := o.floats("output_lens")
	if err != nil {
		return err
	}
	if hasOut {
		lens["output_lens"] = len(outs)
	}
	errs, hasErr, err := o.strs("errors")
	if err != nil {
		return err
	}
	if hasErr {
		lens["errors"] = len(errs)
	}
	starts, hasStart, err := o.floats("start_times")
	if err != nil {
		return err
	}
	if hasStart {
		lens["start_times"] = len(starts)
	}
	e2els, hasE2E, err := o.floats("e2els")
	if err != nil {
		return err
	}
	if hasE2E {
		lens["e2els"] = len(e2els)
	}
	for name, l := range lens {
		if l != n {
			return o.fieldErr(name, "has %d entries but ttfts has %d: the arrays must list the same requests", l, n)
		}
	}

	lv := Level{Label: label, Relative: !hasStart}
	if d, ok, err := o.float("duration"); err != nil {
		return err
	} else if ok {
		lv.DurationS = d
	}
	if lv.Relative && lv.DurationS <= 0 {
		return o.fieldErr("duration", "missing or not positive, and the file has no start_times: throughput cannot be known")
	}
	if err := benchCoordinate(run, o, &lv, n); err != nil {
		return err
	}
	if s, ok, _ := o.str("date"); ok {
		if t, err := time.Parse("20060102-150405", s); err == nil {
			lv.Started = t // the tool's local time; its zone is not recorded
		}
	}

	var st0 float64
	if hasStart {
		st0 = math.Inf(1)
		for _, s := range starts {
			st0 = math.Min(st0, s)
		}
	}
	okCount, gapCount, tpotCount := 0, 0, 0
	lv.Requests = make([]Request, n)
	for i := range n {
		r := &lv.Requests[i]
		r.Status = 200
		if hasStart {
			// start_times are time.perf_counter() readings: offsets, not epoch.
			r.SentNs = secondsToNs(starts[i] - st0)
		}
		if hasIn {
			r.Prompt = ptrTo(int(ins[i]))
		}
		if hasErr && errs[i] != "" {
			r.Status, r.Err = 0, errs[i]
			continue
		}
		if hasOut {
			r.Output = ptrTo(int(outs[i]))
			if outs[i] > 1 {
				tpotCount++
			}
		}
		okCount++
		gapCount += len(itls[i])
		r.TTFT = ptrTo(ttfts[i])
		r.Gaps = itls[i]
		if hasE2E {
			r.E2E = ptrTo(e2els[i])
		} else {
			// The tool's latency is the last chunk's time minus the send: exactly
			// ttft plus the gaps, summed in order as the tool took them.
			e := ttfts[i]
			for _, g := range itls[i] {
				e += g
			}
			r.E2E = &e
		}
	}
	if hasStart && lv.Rate == 0 {
		assignWorkers(lv.Requests)
	}

	// The tool's own numbers. It writes 0 for the statistics of an empty list,
	// which are not statistics: those are left out.
	counts := map[string]int{"ttft": okCount, "tpot": tpotCount, "itl": gapCount, k.e2e: okCount}
	for _, m := range k.metrics {
		if counts[m] == 0 {
			continue
		}
		metric := m
		if m == k.e2e {
			metric = "e2e"
		}
		for _, st := range [][2]string{{"mean", "mean"}, {"median", "p50"}, {"p50", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}} {
			key := st[0] + "_" + m + "_ms"
			if v, ok, err := o.float(key); err != nil {
				return err
			} else if ok {
				lv.References = append(lv.References, Reference{Metric: metric, Stat: st[1], Value: v / 1e3, Key: key})
			}
		}
	}
	for _, r := range [][2]string{{"output_throughput", "output_tok_s"}, {"request_throughput", "request_s"}, {"completed", "requests"}} {
		if v, ok, err := o.float(r[0]); err != nil {
			return err
		} else if ok {
			lv.References = append(lv.References, Reference{Metric: r[1], Stat: "value", Value: v, Key: r[0]})
		}
	}

	if m, ok, _ := o.str("model_id"); ok && run.Model == "" {
		run.Model = m
	}
	if run.Endpoint == "" {
		b := strings.ToLower(o.text("backend") + " " + o.text("endpoint_type") + " " + o.text("endpoint"))
		switch {
		case strings.Contains(b, "chat"):
			run.Endpoint = "chat"
		case strings.Contains(b, "openai") || strings.Contains(b, "vllm") || strings.Contains(b, "completions"):
			run.Endpoint = "completions"
		}
	}
	if sc, ok, _ := o.obj("server_config"); ok {
		if v, ok, _ := sc.str("vllm_version"); ok {
			run.ServerKind, run.ServerVer = engine.VLLM, v
		}
	}
	if run.Started.IsZero() || (!lv.Started.IsZero() && lv.Started.Before(run.Started)) {
		run.Started = lv.Started
	}
	if k.tool == FromVLLM {
		run.Missing = appendNew(run.Missing,
			"the benchmark's version (vLLM result files do not record it)",
			"per-request end time (rebuilt exactly as ttft + sum(itls), the tool's own latency)",
			"time to first content chunk, finish reasons, reasoning tokens",
			"HTTP status of failed requests (only the error text)")
	}
	if !hasOut {
		run.Missing = appendNew(run.Missing, "output token counts (output_lens)")
	}
	run.Levels = append(run.Levels, lv)
	return nil
}

// benchCoordinate sets the level's coordinate: max_concurrency when the tool capped
// concurrency, else a finite request_rate, else every request was sent at once.
func benchCoordinate(run *Run, o object, lv *Level, n int) error {
	c, hasC, err := o.int("max_concurrency")
	if err != nil {
		return err
	}
	rate, hasRate, err := o.float("request_rate")
	if err != nil {
		return err
	}
	switch {
	case hasC && c > 0:
		lv.Concurrency = c
		if hasRate && rate > 0 && !math.IsInf(rate, 1) {
			run.Warnings = appendNew(run.Warnings, fmt.Sprintf("requests arrived at %g req/s under a max_concurrency cap: each level is placed at its cap, and where the cap exceeds what %g req/s keeps busy the arrivals, not the server, limit throughput and concurrency",
				rate, rate))
		}
	case hasRate && rate > 0 && !math.IsInf(rate, 1):
		lv.Rate = rate
	default:
		lv.Concurrency = n
		if m, ok, _ := o.int("max_concurrent_requests"); ok && m > 0 {
			lv.Concurrency = m
		}
		run.Warnings = appendNew(run.Warnings, fmt.Sprintf("%s: no concurrency cap and an infinite request rate: all %d requests were sent at once; the level is placed at concurrency %d",
			lv.Label, n, lv.Concurrency))
	}
	return nil
}

// FromVLLM is vLLM's vllm bench serve, named after its engine: engine.BenchOf
// finds the advice in its flags by this name.
const FromVLLM = string(engine.VLLM)

// vllmTool is vLLM's vllm bench serve, whose keys are a subset of SGLang's
// bench_serving's, so it is detected last.
func vllmTool() tool {
	return tool{
		name:       FromVLLM,
		detectRank: 100,
		detect: func(h head) (bool, error) {
			return h.isJSON() && (h.has("ttfts") || (h.has("mean_ttft_ms") && h.has("duration"))), nil
		},
		read: readVLLM,
		note: wholeDurationNote,
	}
}

// wholeDurationNote is the note for vLLM's and SGLang's benchmarks, which divide by
// their whole duration.
func wholeDurationNote(r Reference) string {
	switch r.Metric {
	case "output_tok_s", "request_s":
		return "the tool divides by its whole duration (arrival schedule, ramp-up and drain included); ceiling uses the steady-state window"
	}
	return ""
}
