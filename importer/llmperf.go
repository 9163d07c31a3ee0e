package importer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Ray's llmperf (token_benchmark_ray.py --results-dir D) writes two files per run:
// NAME_individual_responses.json, a JSON list with one object per completed request
// (ttft_s, end_to_end_latency_s, inter_token_latency_s, number_input_tokens,
// number_output_tokens, error_code, error_msg; times in seconds), and
// NAME_summary.json beside it (num_concurrent_requests, the results_* statistics,
// results_num_completed_requests_per_min). No send time is saved, so every level
// has relative timing; the duration is rebuilt from the summary as
// 60 × completed / completed-per-minute, which is exactly how llmperf derived the
// latter. llmperf's inter_token_latency_s is the request's E2E divided by its
// output tokens (first token included), not a gap between chunks, so it is not
// compared; its output token counts are its own re-tokenization of the text.

// llmperfSummaryPath is the summary beside an individual_responses file.
func llmperfSummaryPath(individual string) string {
	return strings.TrimSuffix(individual, "_individual_responses.json") + "_summary.json"
}

// readLLMPerf reads an llmperf individual_responses file and its summary.
func readLLMPerf(path string) (*Run, error) {
	name := filepath.Base(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(lenient(data), &items); err != nil {
		// A single object is llmperf's summary.
		if o, err2 := decodeObject(name, data); err2 == nil && o.has("results_ttft_s_mean") || err2 == nil && o.has("num_concurrent_requests") {
			return nil, fmt.Errorf("%s: %w: this is llmperf's summary; the per-request records are in the NAME_individual_responses.json that token_benchmark_ray.py writes beside it with --results-dir: import that file", name, ErrSummaryOnly)
		}
		return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: %w: the list of individual responses is empty", name, ErrSummaryOnly)
	}
	run := &Run{Tool: FromLLMPerf, Files: []string{path}}
	lv := Level{Label: name, Relative: true}
	for i, raw := range items {
		o, err := decodeObject(fmt.Sprintf("%s element %d", name, i), raw)
		if err != nil {
			return nil, err
		}
		r, err := llmperfRequest(o)
		if err != nil {
			return nil, err
		}
		lv.Requests = append(lv.Requests, r)
	}
	sumPath := llmperfSummaryPath(path)
	data, err = os.ReadFile(sumPath)
	if err != nil {
		return nil, fmt.Errorf("%s: no llmperf summary %s beside it: its concurrency and duration are only there, and without them the level cannot be placed or its throughput known", name, filepath.Base(sumPath))
	}
	run.Files = append(run.Files, sumPath)
	if err := llmperfSummary(run, &lv, filepath.Base(sumPath), data); err != nil {
		return nil, err
	}
	run.Missing = appendNew(run.Missing,
		"absolute send times",
		"chunk gaps (llmperf keeps only inter_token_latency_s, the E2E divided by the output tokens)",
		"server token counts (llmperf re-tokenizes the generated text with its own tokenizer)",
		"failed requests' latencies (llmperf lists only their error code and message)")
	run.Levels = append(run.Levels, lv)
	return run, nil
}

func llmperfRequest(o object) (Request, error) {
	r := Request{Status: 200}
	if in, ok, err := o.int("number_input_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Prompt = ptrTo(in)
	}
	code := o.text("error_code")
	msg, _, err := o.str("error_msg")
	if err != nil {
		return r, err
	}
	if code != "" || msg != "" {
		r.Status = 0
		if c, err := strconv.Atoi(code); err == nil {
			r.Status = c
		}
		r.Err = strings.TrimSpace(msg)
		if r.Err == "" {
			r.Err = "error code " + code
		}
		return r, nil
	}
	ttft, ok, err := o.float("ttft_s")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("ttft_s", "missing on a request without an error")
	}
	e2e, ok, err := o.float("end_to_end_latency_s")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, o.fieldErr("end_to_end_latency_s", "missing on a request without an error")
	}
	if ttft < 0 || e2e < ttft {
		return r, o.fieldErr("end_to_end_latency_s", "%g s is shorter than ttft_s %g s", e2e, ttft)
	}
	r.TTFT, r.E2E = &ttft, &e2e
	if out, ok, err := o.int("number_output_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Output = ptrTo(out)
	}
	return r, nil
}

// llmperfSummary reads the concurrency, duration, model and llmperf's numbers.
func llmperfSummary(run *Run, lv *Level, name string, data []byte) error {
	s, err := decodeObject(name, data)
	if err != nil {
		return err
	}
	if v, ok, _ := s.str("version"); ok {
		run.ToolVersion = "results format " + v
	}
	if m, ok, _ := s.str("model"); ok {
		run.Model = m
	}
	c, ok, err := s.int("num_concurrent_requests")
	if err != nil {
		return err
	}
	if !ok || c < 1 {
		return s.fieldErr("num_concurrent_requests", "missing or below 1: the level's concurrency is unknown")
	}
	lv.Concurrency = c
	done, ok1, err := s.float("results_num_completed_requests")
	if err != nil {
		return err
	}
	perMin, ok2, err := s.float("results_num_completed_requests_per_min")
	if err != nil {
		return err
	}
	if !ok1 || !ok2 || perMin <= 0 {
		return s.fieldErr("results_num_completed_requests_per_min", "missing or not positive: the run's duration (and so its throughput) cannot be known")
	}
	lv.DurationS = 60 * done / perMin
	if int(done) != countOK(lv.Requests) {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: the summary counts %g completed requests, the individual responses hold %d without an error", name, done, countOK(lv.Requests)))
	}
	for _, m := range [][2]string{{"ttft_s", "ttft"}, {"end_to_end_latency_s", "e2e"}} {
		for _, st := range [][2]string{{"mean", "mean"}, {"quantiles_p50", "p50"}, {"quantiles_p90", "p90"}, {"quantiles_p95", "p95"}, {"quantiles_p99", "p99"}} {
			key := "results_" + m[0] + "_" + st[0]
			if v, ok, err := s.float(key); err != nil {
				return err
			} else if ok {
				lv.References = append(lv.References, Reference{Metric: m[1], Stat: st[1], Value: v, Key: key})
			}
		}
	}
	if v, ok, err := s.float("results_mean_output_throughput_token_per_s"); err != nil {
		return err
	} else if ok {
		lv.References = append(lv.References, Reference{Metric: "output_tok_s", Stat: "value", Value: v, Key: "results_mean_output_throughput_token_per_s"})
	}
	lv.References = append(lv.References, Reference{Metric: "requests", Stat: "value", Value: done, Key: "results_num_completed_requests"})
	return nil
}

func countOK(reqs []Request) int {
	n := 0
	for _, r := range reqs {
		if r.Err == "" {
			n++
		}
	}
	return n
}

// FromLLMPerf is Ray's llmperf.
const FromLLMPerf = "llmperf"

// llmperfTool is Ray's llmperf: its individual_responses file, or its summary,
// which is read with the responses beside it.
func llmperfTool() tool {
	return tool{
		name:       FromLLMPerf,
		detectRank: 30,
		detect: func(h head) (bool, error) {
			return (h.isList() && h.has("ttft_s") && h.has("end_to_end_latency_s")) ||
				// llmperf's summary: readLLMPerf says where the records are
				(h.isObject() && h.has("results_ttft_s_mean", "results_num_completed_requests_per_min")), nil
		},
		read: readLLMPerf,
		readWithRecords: func(path string, given func(string) bool) bool {
			return strings.HasSuffix(path, "_summary.json") && given(filepath.Clean(strings.TrimSuffix(path, "_summary.json")+"_individual_responses.json"))
		},
		note: wholeRunNote,
	}
}

// wholeRunNote is the note for tools that divide by their whole run's duration
// (llmperf, genai-bench), which a relative-timing level rebuilds.
func wholeRunNote(r Reference) string {
	switch r.Metric {
	case "output_tok_s", "request_s":
		return "the tool divides by its whole run's duration; ceiling's relative-timing level does the same, so a difference is the duration rebuilt from the summary"
	}
	return ""
}
