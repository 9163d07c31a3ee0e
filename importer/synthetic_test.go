package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMalformed checks that bad input gets an error naming the file and the field.
func TestMalformed(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // substrings of the error
		summary    bool     // the error wraps ErrSummaryOnly
	}{
		{"foreign.json", `{"hello": "world"}`, []string{"foreign.json", "not a result file of a known benchmark tool"}, false},
		{"notjson.json", `hello`, []string{"notjson.json", "not JSON"}, false},
		{"truncated.json", `{"ttfts": [0.1, 0.2], "duration": 3, "itls": [[0.01]`, []string{"truncated.json", "invalid JSON"}, false},
		{"lens.json", `{"duration": 1, "completed": 2, "ttfts": [0.1, 0.2], "itls": [[0.01], [0.02]], "output_lens": [2]}`,
			[]string{"lens.json", `"output_lens"`, "1 entries but ttfts has 2"}, false},
		{"ttftstr.json", `{"duration": 1, "completed": 1, "ttfts": ["x"], "itls": [[0.01]]}`,
			[]string{"ttftstr.json", `"ttfts"`, "element 0", "want a number"}, false},
		{"itlsflat.json", `{"duration": 1, "completed": 1, "ttfts": [0.1], "itls": [0.01]}`,
			[]string{"itlsflat.json", `"itls"`, "element 0", "array of numbers"}, false},
		{"noduration.json", `{"completed": 1, "ttfts": [0.1], "itls": [[0.01]]}`,
			[]string{"noduration.json", `"duration"`, "no start_times"}, false},
		{"conc.json", `{"duration": 1, "completed": 1, "max_concurrency": 1.5, "ttfts": [0.1], "itls": [[0.01]]}`,
			[]string{"conc.json", `"max_concurrency"`, "whole number"}, false},
		{"summary.json", `{"duration": 1, "completed": 1, "mean_ttft_ms": 5}`,
			[]string{"summary.json", "per-request data is needed", "--save-detailed"}, true},
		{"aiperf.jsonl", `{"metadata": {"x_request_id": "a"}, "metrics": {"ttft": {"value": 5, "unit": "ms"}}}`,
			[]string{"aiperf.jsonl line 1", "request_start_ns"}, false},
		{"a_individual_responses.json", `[{"error_code": null, "error_msg": "", "ttft_s": 0.1, "end_to_end_latency_s": 1, "number_output_tokens": 3}]`,
			[]string{"a_individual_responses.json", "no llmperf summary a_summary.json", "concurrency and duration"}, false},
		{"b_individual_responses.json", `[{"error_code": null, "error_msg": "", "ttft_s": "x", "end_to_end_latency_s": 1}]`,
			[]string{"b_individual_responses.json element 0", `"ttft_s"`, "want a number"}, false},
		{"genai.json", `{"aggregated_metrics": {"num_concurrency": 2}, "individual_request_metrics": [{"ttft": 1}], "_time_unit": "min"}`,
			[]string{"genai.json", `"_time_unit"`, `unknown time unit "min"`}, false},
		{"genai2.json", `{"aggregated_metrics": {"num_concurrency": 2}, "individual_request_metrics": []}`,
			[]string{"genai2.json", "individual_request_metrics is empty"}, true},
		{"ip.json", `[{"start_time": 5, "end_time": 4, "info": {"output_token_times": [4.5]}}]`,
			[]string{"ip.json element 0", `"end_time"`, "before start_time"}, false},
		{"ip2.json", `[{"start_time": 5, "end_time": 6, "info": {"input_tokens": 3, "output_tokens": 1}, "error": null}]`,
			[]string{"ip2.json element 0", `"output_token_times"`, "not streamed"}, false},
		{"ix.json", `{"output_tput_per_gpu": 1, "conc": "inf"}`,
			[]string{"ix.json", `"conc"`, "not finite"}, false},
		{"llmd.yaml", "version: '0.2'\nscenario: {}\nresults:\n  request_performance:\n    aggregate:\n      latency:\n        time_to_first_token: {units: parsecs, mean: 1}\n",
			[]string{"llmd.yaml", `"units"`, `unknown latency unit "parsecs"`}, false},
		{"guidellm.json", `{"metadata": {"guidellm_version": "0.5"}, "benchmarks": [{"config": {"strategy": {"type_": "warp"}}}]}`,
			[]string{"guidellm.json benchmarks[0]", `"type_"`, `unknown guidellm strategy "warp"`}, false},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Import(context.Background(), []string{path}, Options{})
			if err == nil {
				t.Fatal("imported, want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if errors.Is(err, ErrSummaryOnly) != c.summary {
				t.Errorf("error %q: wraps ErrSummaryOnly = %v, want %v", err, !c.summary, c.summary)
			}
		})
	}
}

// TestSGLangDetails imports an SGLang line with --output-details arrays and the
// bare Infinity token, and checks what each request carries.
func TestSGLangDetails(t *testing.T) {
	line := `{"backend": "sglang", "request_rate": Infinity, "max_concurrency": 2, "duration": 2.0, "completed": 2,
"server_info": {"version": "0.5.5", "note": "a string with Infinity and NaN inside"},
"input_lens": [10, 12], "output_lens": [3, 0], "ttfts": [0.05, 0.0], "itls": [[0.01, 0.02], []], "errors": ["", "boom"],
"mean_ttft_ms": 50.0, "median_ttft_ms": 50.0, "p99_ttft_ms": 50.0, "mean_e2e_latency_ms": 80.0, "mean_itl_ms": 15.0, "output_throughput": 1.5}`
	path := filepath.Join(t.TempDir(), "sglang.jsonl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(line, "\n", " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Import(context.Background(), []string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Tool != FromSGLang || run.ToolVersion != "0.5.5" || len(run.Levels) != 1 {
		t.Fatalf("got %s %s with %d levels", run.Tool, run.ToolVersion, len(run.Levels))
	}
	l := run.Levels[0]
	if l.Concurrency != 2 || l.Rate != 0 || !l.Relative || l.DurationS != 2 {
		t.Errorf("level %+v: want concurrency 2, relative timing, duration 2", l)
	}
	ok, bad := l.Requests[0], l.Requests[1]
	if ok.TTFT == nil || *ok.TTFT != 0.05 || ok.E2E == nil || *ok.E2E != 0.05+0.01+0.02 || *ok.Output != 3 || *ok.Prompt != 10 {
		t.Errorf("successful request %+v", ok)
	}
	if bad.TTFT != nil || bad.Err != "boom" || bad.Status != 0 || bad.Output != nil {
		t.Errorf("failed request %+v", bad)
	}
	var keys []string
	for _, r := range l.References {
		keys = append(keys, r.Key)
	}
	if got := strings.Join(keys, ","); got != "mean_ttft_ms,median_ttft_ms,p99_ttft_ms,mean_itl_ms,mean_e2e_latency_ms,output_throughput,completed" {
		t.Errorf("references %s", got)
	}
}

// TestAssignWorkers checks the slot assignment of capped concurrency: two slots
// for requests that overlap two at a time.
func TestAssignWorkers(t *testing.T) {
	e := func(s float64) *float64 { return &s }
	reqs := []Request{
		{SentNs: 0, E2E: e(1)}, {SentNs: 0, E2E: e(2)}, {SentNs: 1e9, E2E: e(2)}, {SentNs: 2e9, E2E: e(1)},
	}
	assignWorkers(reqs)
	want := []int{0, 1, 0, 1}
	for i, r := range reqs {
		if r.Worker != want[i] {
			t.Errorf("request %d on worker %d, want %d", i, r.Worker, want[i])
		}
	}
	if p := peakInFlight(reqs); p != 2 {
		t.Errorf("peak in flight %d, want 2", p)
	}
}
