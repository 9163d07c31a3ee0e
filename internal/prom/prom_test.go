package prom

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/sharedtest"
)

func TestParseLine(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name, line string
		want       Sample
	}{
		{"plain", `tgi_queue_size 0`, Sample{"tgi_queue_size", "", 0}},
		{"colon name", `vllm:num_requests_running{model_name="m"} 3.0`, Sample{"vllm:num_requests_running", `model_name="m"`, 3}},
		{"labels sorted", `x{b="2",a="1"} 1`, Sample{"x", `a="1",b="2"`, 1}},
		{"trailing comma", `x{a="1",} 1`, Sample{"x", `a="1"`, 1}},
		{"escaped quote", `x{path="say \"hi\""} 1`, Sample{"x", `path="say \"hi\""`, 1}},
		{"escaped backslash", `x{dir="C:\\tmp"} 1`, Sample{"x", `dir="C:\\tmp"`, 1}},
		{"escaped newline", `x{help="a\nb"} 1`, Sample{"x", `help="a\nb"`, 1}},
		{"brace and comma in value", `x{q="a},b=\"c"} 2`, Sample{"x", `q="a},b=\"c"`, 2}},
		{"empty value", `x{a=""} 1`, Sample{"x", `a=""`, 1}},
		{"spaces around", `x { a = "1" } 1`, Sample{"x", `a="1"`, 1}},
		{"three-digit exponent", `process_virtual_memory_bytes 1.15891634176e+011`, Sample{"process_virtual_memory_bytes", "", 1.15891634176e11}},
		{"small exponent", `k{engine="0"} 9.75010481363281e-06`, Sample{"k", `engine="0"`, 9.75010481363281e-06}},
		{"e-notation count", `sglang:prompt_tokens_total 8.128902e+06`, Sample{"sglang:prompt_tokens_total", "", 8128902}},
		{"+Inf", `h_bucket{le="+Inf"} +Inf`, Sample{"h_bucket", `le="+Inf"`, math.Inf(1)}},
		{"-Inf", `g -Inf`, Sample{"g", "", math.Inf(-1)}},
		{"NaN", `g NaN`, Sample{"g", "", nan}},
		{"-nan (glibc)", `llamacpp:n_busy_slots_per_decode -nan`, Sample{"llamacpp:n_busy_slots_per_decode", "", nan}},
		{"nan", `g nan`, Sample{"g", "", nan}},
		{"-nan(ind) (MSVC)", `g -nan(ind)`, Sample{"g", "", nan}},
		{"timestamp", `g 1 1700074049000`, Sample{"g", "", 1}},
		{"exemplar", `h_bucket{le="0.5"} 10 # {trace_id="abc"} 0.3`, Sample{"h_bucket", `le="0.5"`, 10}},
		{"tab separated", "g\t4", Sample{"g", "", 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLine(tt.line)
			if err != nil {
				t.Fatalf("ParseLine(%q): %v", tt.line, err)
			}
			if got.Name != tt.want.Name || got.Labels != tt.want.Labels || !same(got.Value, tt.want.Value) {
				t.Errorf("ParseLine(%q) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, line := range []string{
		`{a="1"} 1`,         // no name
		`x{a="1" 1`,         // labels not closed
		`x{a="1} 1`,         // value not closed
		`x{a=1} 1`,          // value not quoted
		`x{a} 1`,            // no =
		`x`,                 // no value
		`x one`,             // not a number
		`x 1 2 3`,           // too many fields
		`x 1 soon`,          // bad timestamp
		`x -nan(ind`,        // half a NaN tag
		`x nanny`,           // not NaN
		`x{a="1"}`,          // labels, no value
		`x{a="1",b="2"}} 1`, // stray brace
	} {
		if s, err := ParseLine(line); err == nil {
			t.Errorf("ParseLine(%q) = %+v, want an error", line, s)
		}
	}
}

func TestParse(t *testing.T) {
	// A histogram printed as SGLang does (sum and count before the buckets), blank
	// lines between families, HELP/TYPE/comment lines, CRLF, no trailing newline.
	in := "# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.\n" +
		"# TYPE sglang:time_to_first_token_seconds histogram\n" +
		"sglang:time_to_first_token_seconds_sum{model_name=\"m\"} 2.3518979474117756e+06\n" +
		"sglang:time_to_first_token_seconds_count{model_name=\"m\"} 11008.0\r\n" +
		"sglang:time_to_first_token_seconds_bucket{le=\"0.1\",model_name=\"m\"} 0.0\n" +
		"sglang:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 11008.0\n" +
		"\n" +
		"   \n" +
		"# a free comment\n" +
		"#TYPE odd comment without space\n" +
		"# HELP tgi_queue_size Current queue size\n" +
		"# TYPE tgi_queue_size gauge\n" +
		"tgi_queue_size 7"
	got, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{
		{"sglang:time_to_first_token_seconds_sum", `model_name="m"`, 2.3518979474117756e+06},
		{"sglang:time_to_first_token_seconds_count", `model_name="m"`, 11008},
		{"sglang:time_to_first_token_seconds_bucket", `le="0.1",model_name="m"`, 0},
		{"sglang:time_to_first_token_seconds_bucket", `le="+Inf",model_name="m"`, 11008},
		{"tgi_queue_size", "", 7},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d samples %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseReportsBadLinesAndKeepsTheRest(t *testing.T) {
	in := "a 1\nbroken{x=\"1\" 2\nb 3\nc what\n"
	got, err := Parse(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "2 unreadable") || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error %v, want it to name lines 2 and 4", err)
	}
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Errorf("samples %+v, want a and b", got)
	}
}

func TestParseLabelsRoundTrip(t *testing.T) {
	s, err := ParseLine(`x{z="last",a="q\"u\\o\nte",m="a,b=c"} 1`)
	if err != nil {
		t.Fatal(err)
	}
	m := ParseLabels(s.Labels)
	want := map[string]string{"z": "last", "a": "q\"u\\o\nte", "m": "a,b=c"}
	if len(m) != len(want) {
		t.Fatalf("ParseLabels(%q) = %q, want %q", s.Labels, m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("label %s = %q, want %q", k, m[k], v)
		}
	}
	if len(ParseLabels("")) != 0 {
		t.Error("ParseLabels of no labels is not empty")
	}
}

// TestParseFixtures parses every real /metrics dump of the shared fixtures without
// an unreadable line, and checks values the fixtures' INDEX.md states exactly.
func TestParseFixtures(t *testing.T) {
	// Real servers' /metrics dumps, shared beside the repository.
	fixturesDir := sharedtest.Dir(t, "metrics-fixtures")
	files, _ := filepath.Glob(filepath.Join(fixturesDir, "*.prom"))
	if len(files) == 0 {
		t.Fatalf("no metrics dump (*.prom) in %s", fixturesDir)
	}
	all := map[string]map[string]float64{} // file → "name{labels}" → value
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := Parse(strings.NewReader(string(raw)))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		if len(samples) == 0 {
			t.Errorf("%s: no samples", filepath.Base(f))
		}
		// Every sample line of the file is one sample.
		lines := 0
		for _, l := range strings.Split(string(raw), "\n") {
			if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
				lines++
			}
		}
		if len(samples) != lines {
			t.Errorf("%s: %d samples from %d sample lines", filepath.Base(f), len(samples), lines)
		}
		m := map[string]float64{}
		for _, s := range samples {
			m[s.Name+"{"+s.Labels+"}"] = s.Value
		}
		all[filepath.Base(f)] = m
	}
	for _, c := range []struct {
		file, series string
		want         float64
	}{
		{"vllm-0.4.3-2024-06-opt125m-v0-datadog.prom", `vllm:time_to_first_token_seconds_sum{model_name="facebook/opt-125m"}`, 0.31326723098754883},
		{"vllm-0.10.0-2025-07-glm45-prodstack617-excerpt.prom", `vllm:kv_cache_usage_perc{engine="0",model_name="zai-org/GLM-4.5"}`, 9.75010481363281e-06},
		{"nim-llm-1.0.0-2024-10-llama31-8b-running1-datadog.prom", `process_virtual_memory_bytes{}`, 1.15891634176e+11},
		{"nim-llm-1.0.0-2024-10-llama31-8b-running1-datadog.prom", `num_requests_running{model_name="meta/llama-3.1-8b-instruct"}`, 1},
		{"sglang-0.4.x-docs-llama31-8b-under-load.prom", `sglang:num_queue_reqs{model_name="meta-llama/Llama-3.1-8B-Instruct"}`, 2826},
		{"sglang-0.4.x-docs-llama31-8b-under-load.prom", `sglang:prompt_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"}`, 8.128902e+06},
		{"llamacpp-2025-post13660-complete-unattributed.prom", `llamacpp:predicted_tokens_seconds{}`, 27.9427},
		{"llamacpp-b4687-2025-02-idle-nan-pr11915-excerpt.prom", `llamacpp:n_busy_slots_per_decode{}`, math.NaN()},
		{"tgi-3.x-datadog-payload-excerpt.prom", `tgi_request_failure{err="validation"}`, 2},
		{"trtllm-triton-backend-readme-2025-04-inflight-batcher.prom", `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="free",model="tensorrt_llm",version="1"}`, 6239},
	} {
		m, ok := all[c.file]
		if !ok {
			t.Errorf("fixture %s missing", c.file)
			continue
		}
		got, ok := m[c.series]
		if !ok {
			t.Errorf("%s: no series %s", c.file, c.series)
			continue
		}
		if !same(got, c.want) {
			t.Errorf("%s: %s = %v, want %v", c.file, c.series, got, c.want)
		}
	}
}

// same compares values, NaN equal to NaN.
func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
