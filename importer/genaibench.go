package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
)

// SGLang's genai-bench writes an experiment folder: experiment_metadata.json (the
// command, model, backend, server facts, the traffic scenarios and the concurrency
// list) and one JSON file per scenario and concurrency,
// "D100_100_text-to-text_num_concurrency_1_time_120s.json", holding
// aggregated_metrics (run_duration, requests_per_second, stats.{ttft, tpot,
// e2e_latency, ...}.{mean, p25…p99}) and individual_request_metrics, one object per
// request (ttft, tpot, e2e_latency, output_latency, num_input_tokens,
// num_output_tokens, error_code, error_message). "_time_unit" says whether the
// latencies are in s or ms. No send time is saved: levels have relative timing and
// the duration is num_completed_requests / requests_per_second, the tool's own.
// genai-bench's tpot is output_latency / (num_output_tokens − 1) with
// output_latency = e2e − ttft, which is ceiling's TPOT.

const genaiMetadata = "experiment_metadata.json"

// readGenAIBench reads an experiment folder, or one scenario file (with the
// folder's metadata when it is beside it).
func readGenAIBench(path string) (*Run, error) {
	run := &Run{Tool: FromGenAIBench}
	dir, files := path, []string(nil)
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	} else if st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") && e.Name() != genaiMetadata {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		sort.Strings(files)
	} else {
		dir, files = filepath.Dir(path), []string{path}
	}
	if filepath.Base(path) == genaiMetadata {
		return nil, fmt.Errorf("%s: %w: this is genai-bench's experiment metadata; the results are in the scenario files beside it: import the experiment folder", path, ErrSummaryOnly)
	}
	if data, err := os.ReadFile(filepath.Join(dir, genaiMetadata)); err == nil {
		run.Files = append(run.Files, filepath.Join(dir, genaiMetadata))
		if err := genaiMeta(run, genaiMetadata, data); err != nil {
			return nil, err
		}
	} else {
		run.Missing = appendNew(run.Missing, "the model, backend and genai-bench version (no experiment_metadata.json beside the results)")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		o, err := decodeObject(filepath.Base(f), data)
		if err != nil {
			return nil, err
		}
		if !o.has("aggregated_metrics") {
			if len(files) == 1 {
				return nil, fmt.Errorf("%s: %w: no aggregated_metrics: not a genai-bench scenario result", f, ErrUnknownFormat)
			}
			continue // another JSON file in the folder
		}
		lv, err := genaiLevel(run, o)
		if err != nil {
			return nil, err
		}
		run.Files = append(run.Files, f)
		run.Levels = append(run.Levels, lv)
	}
	if len(run.Levels) == 0 {
		return nil, fmt.Errorf("%s: no genai-bench scenario result (a JSON file with aggregated_metrics) in the folder", path)
	}
	scenarios := map[string]bool{}
	for _, l := range run.Levels {
		scenarios[strings.SplitN(l.Label, " ", 2)[0]] = true
	}
	if len(scenarios) > 1 {
		run.Warnings = append(run.Warnings, fmt.Sprintf("the folder holds %d traffic scenarios: their levels are imported as one sweep; import one scenario's files at a time to compare like with like", len(scenarios)))
	}
	run.Missing = appendNew(run.Missing, "absolute send times", "chunk gaps (genai-bench keeps per-request TPOT only)",
		"HTTP status of failed requests beyond their error code")
	return run, nil
}

func genaiMeta(run *Run, name string, data []byte) error {
	m, err := decodeObject(name, data)
	if err != nil {
		return err
	}
	if v, ok, _ := m.str("benchmark_version"); ok {
		run.ToolVersion = v
	}
	if v, ok, _ := m.str("api_model_name"); ok {
		run.Model = v
	}
	if v, ok, _ := m.str("server_engine"); ok {
		run.ServerKind = engine.Name(strings.ToLower(v))
	}
	if v, ok, _ := m.str("server_version"); ok {
		run.ServerVer = v
	}
	if cmd, ok, _ := m.str("cmd"); ok {
		if i := strings.Index(cmd, "--api-base "); i >= 0 {
			base := strings.Fields(cmd[i+len("--api-base "):])
			if len(base) > 0 {
				run.BaseURL = stripUserinfo(base[0])
			}
		}
	}
	if t, ok, _ := m.str("task"); ok && t != "text-to-text" {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: task %q: ceiling's analysis is for text generation; token figures may not mean the same", name, t))
	}
	return nil
}

// stripUserinfo removes credentials from a URL written in a command line.
func stripUserinfo(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexAny(rest+"/", "/?") {
			return u[:i+3] + rest[at+1:]
		}
	}
	return u
}

func genaiLevel(run *Run, o object) (Level, error) {
	agg, _, err := o.obj("aggregated_metrics")
	if err != nil {
		return Level{}, err
	}
	lv := Level{Relative: true}
	scale := 1.0
	if u, ok, _ := o.str("_time_unit"); ok {
		switch u {
		case "s":
		case "ms":
			scale = 1e-3
		default:
			return lv, o.fieldErr("_time_unit", "unknown time unit %q (want s or ms)", u)
		}
	}
	it, _, _ := agg.str("iteration_type")
	c, okC, err := agg.int("num_concurrency")
	if err != nil {
		return lv, err
	}
	if it != "" && it != "num_concurrency" {
		return lv, agg.fieldErr("iteration_type", "%q: only num_concurrency sweeps map onto concurrency levels", it)
	}
	if !okC || c < 1 {
		return lv, agg.fieldErr("num_concurrency", "missing or below 1")
	}
	lv.Concurrency = c
	scenario, _, _ := agg.str("scenario")
	lv.Label = fmt.Sprintf("%s c=%d (%s)", scenario, c, o.where)

	items, ok, err := o.array("individual_request_metrics")
	if err != nil {
		return lv, err
	}
	if !ok || len(items) == 0 {
		return lv, fmt.Errorf("%s: %w: individual_request_metrics is empty or missing; genai-bench writes it for every run: import the scenario file of the experiment folder as written", o.where, ErrSummaryOnly)
	}
	for i, raw := range items {
		ro, err := decodeObject(fmt.Sprintf("%s individual_request_metrics[%d]", o.where, i), raw)
		if err != nil {
			return lv, err
		}
		r, err := genaiRequest(ro, scale)
		if err != nil {
			return lv, err
		}
		lv.Requests = append(lv.Requests, r)
	}
	done, ok1, err := agg.float("num_completed_requests")
	if err != nil {
		return lv, err
	}
	rps, ok2, err := agg.float("requests_per_second")
	if err != nil {
		return lv, err
	}
	if ok1 && ok2 && rps > 0 {
		lv.DurationS = done / rps
	} else if d, ok, err := agg.float("run_duration"); err != nil {
		return lv, err
	} else if ok && d > 0 {
		lv.DurationS = d
	} else {
		return lv, agg.fieldErr("run_duration", "missing or not positive, and no requests_per_second: the level's throughput cannot be known")
	}
	if stats, ok, err := agg.obj("stats"); err != nil {
		return lv, err
	} else if ok {
		for _, m := range [][2]string{{"ttft", "ttft"}, {"tpot", "tpot"}, {"e2e_latency", "e2e"}} {
			st, ok, err := stats.obj(m[0])
			if err != nil {
				return lv, err
			}
			if !ok {
				continue
			}
			for _, s := range []string{"mean", "p50", "p90", "p95", "p99"} {
				if v, ok, err := st.float(s); err != nil {
					return lv, err
				} else if ok {
					lv.References = append(lv.References, Reference{Metric: m[1], Stat: s, Value: v * scale, Key: "stats." + m[0] + "." + s})
				}
			}
		}
	}
	for _, t := range [][2]string{{"mean_output_throughput_tokens_per_s", "output_tok_s"}, {"requests_per_second", "request_s"}, {"num_completed_requests", "requests"}} {
		if v, ok, err := agg.float(t[0]); err != nil {
			return lv, err
		} else if ok {
			lv.References = append(lv.References, Reference{Metric: t[1], Stat: "value", Value: v, Key: t[0]})
		}
	}
	if ok1 && int(done) != countOK(lv.Requests) {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: num_completed_requests is %g but %d individual requests have no error", o.where, done, countOK(lv.Requests)))
	}
	return lv, nil
}

func genaiRequest(o object, scale float64) (Request, error) {
	r := Request{Status: 200}
	if in, ok, err := o.int("num_input_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Prompt = ptrTo(in)
	}
	code := o.text("error_code")
	msg := o.text("error_message")
	if code != "" || msg != "" {
		r.Status = 0
		if c, ok, _ := o.int("error_code"); ok {
			r.Status = c
		}
		r.Err = strings.TrimSpace(msg)
		if r.Err == "" {
			r.Err = "error code " + code
		}
		return r, nil
	}
	ttft, ok, err := o.float("ttft")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("ttft", "missing on a request without an error")
	}
	e2e, ok, err := o.float("e2e_latency")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("e2e_latency", "missing on a request without an error")
	}
	ttft, e2e = ttft*scale, e2e*scale
	if ttft < 0 || e2e < ttft {
		return r, o.fieldErr("e2e_latency", "%g s is shorter than ttft %g s", e2e, ttft)
	}
	r.TTFT, r.E2E = &ttft, &e2e
	if out, ok, err := o.int("num_output_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Output = ptrTo(out)
	}
	return r, nil
}

// FromGenAIBench is SGLang's genai-bench.
const FromGenAIBench = "genai-bench"

// genaiBenchTool is SGLang's genai-bench: a scenario's results, or the experiment
// directory holding them. experiment_metadata.json alone is detected so that
// readGenAIBench can refuse it with what to import.
func genaiBenchTool() tool {
	return tool{
		name:       FromGenAIBench,
		detectRank: 50,
		detect: func(h head) (bool, error) {
			return h.isJSON() && ((h.has("aggregated_metrics") && h.has("individual_request_metrics")) ||
				(h.has("benchmark_version") && h.has("traffic_scenario"))), nil
		},
		dirEntry: func(name string) bool { return name == genaiMetadata },
		read:     readGenAIBench,
		note:     wholeRunNote,
	}
}
