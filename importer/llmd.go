package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// llm-d-benchmark converts each harness's native results into a "benchmark report"
// (schema v0.2 in its benchmark_report/schema_v0_2.py; YAML or JSON): version,
// run{uid, time}, scenario{stack[] (engines: standardized.model.name,
// accelerator{model, count}), load.standardized{tool, tool_version, stage,
// concurrency, rate_qps}}, results.request_performance.aggregate{requests{total,
// failures}, latency{time_to_first_token, time_per_output_token,
// inter_token_latency, request_latency}{units, mean, p50, p90, …},
// throughput{output_token_rate, request_rate}.mean}. It stores aggregates only, so
// it is refused as a trace (with the harness's option that keeps per-request data)
// and read by ReadSummary as one summary-level point.

// llmdPerRequestHint is, per harness, what keeps per-request data beside the report.
var llmdPerRequestHint = map[string]string{
	"inference-perf": "inference-perf's per_request_lifecycle_metrics.json (config report.request_lifecycle.per_request: true)",
	"vllm-benchmark": "the vLLM result JSON saved with --save-result --save-detailed",
	"guidellm":       "guidellm's benchmarks.json with its requests lists",
	"aiperf":         "AIPerf's profile_export.jsonl",
	"inferencemax":   "the raw benchmark_serving result saved with --save-detailed",
}

// readLLMD refuses a benchmark report as a trace.
func readLLMD(path string) (*Run, error) {
	s, err := ReadSummary(path)
	if err != nil {
		return nil, err
	}
	harness := strings.TrimPrefix(s.Version, "harness ")
	hint := llmdPerRequestHint[harness]
	if hint == "" {
		hint = "the harness's native per-request results"
	}
	return nil, fmt.Errorf("%s: %w: an llm-d-benchmark report (%s) holds aggregates only; import %s from the same results directory (the report is read as a summary-level point for comparisons)",
		filepath.Base(path), ErrSummaryOnly, s.Version, hint)
}

// yamlOrJSON decodes a YAML or JSON document into an object (YAML's .inf and .nan
// become the strings the number getters read).
func yamlOrJSON(where string, data []byte) (object, error) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '{' {
		return decodeObject(where, data)
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return object{}, fmt.Errorf("%s: invalid YAML: %v", where, err)
	}
	js, err := json.Marshal(jsonSafe(v))
	if err != nil {
		return object{}, fmt.Errorf("%s: %v", where, err)
	}
	return decodeObject(where, js)
}

// jsonSafe turns YAML's decoded values into ones encoding/json writes: maps with
// non-string keys get string keys, infinities and NaN become strings.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonSafe(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonSafe(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = jsonSafe(x[i])
		}
		return x
	case float64:
		switch {
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		case math.IsNaN(x):
			return "NaN"
		}
	}
	return v
}

// latencyScale is the factor to seconds of a benchmark report's latency units.
func latencyScale(o object, k string) (float64, error) {
	sub, ok, err := o.obj(k)
	if err != nil || !ok {
		return 1, err
	}
	u, _, _ := sub.str("units")
	switch strings.ToLower(strings.TrimSpace(u)) {
	case "", "s", "s/token", "sec", "seconds":
		return 1, nil
	case "ms", "ms/token":
		return 1e-3, nil
	case "us", "us/token", "µs", "µs/token":
		return 1e-6, nil
	}
	return 0, sub.fieldErr("units", "unknown latency unit %q", u)
}

func readLLMDSummary(path string, data []byte) (*Summary, error) {
	name := filepath.Base(path)
	o, err := yamlOrJSON(name, data)
	if err != nil {
		return nil, err
	}
	version := o.text("version")
	if !strings.HasPrefix(version, "0.2") {
		return nil, o.fieldErr("version", "%q: this reads benchmark reports of schema 0.2", version)
	}
	s := &Summary{Tool: FromLLMD, Missing: []string{"per-request records (the report holds aggregates only)"}}
	pt := SummaryPoint{Label: name}
	if sc, ok, err := o.obj("scenario"); err != nil {
		return nil, err
	} else if ok {
		if load, ok, _ := sc.obj("load"); ok {
			if std, ok, _ := load.obj("standardized"); ok {
				harness := std.text("tool")
				s.Version = "harness " + harness
				if v := std.text("tool_version"); v != "" {
					s.Version += " " + v
				}
				if c, ok, err := std.float("concurrency"); err != nil {
					return nil, err
				} else if ok && c > 0 && !math.IsInf(c, 0) {
					pt.Concurrency = c
				}
				if r, ok, err := std.float("rate_qps"); err != nil {
					return nil, err
				} else if ok && r > 0 && !math.IsInf(r, 0) && pt.Concurrency == 0 {
					pt.Rate = r
				}
				if st := std.text("stage"); st != "" {
					pt.Label += " stage " + st
				}
			}
		}
		if stack, ok, _ := sc.array("stack"); ok {
			for i, raw := range stack {
				c, err := decodeObject(fmt.Sprintf("%s scenario.stack[%d]", name, i), raw)
				if err != nil {
					return nil, err
				}
				std, ok, _ := c.obj("standardized")
				if !ok {
					continue
				}
				if m, ok, _ := std.obj("model"); ok && pt.Model == "" {
					pt.Model = m.text("name")
				}
				if a, ok, _ := std.obj("accelerator"); ok {
					pt.GPU = a.text("model")
					if n, ok, _ := a.int("count"); ok {
						pt.GPUs += n
					}
				}
			}
		}
	}
	res, ok, err := o.obj("results")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, o.fieldErr("results", "missing")
	}
	rp, ok, err := res.obj("request_performance")
	if err != nil || !ok {
		return nil, res.fieldErr("request_performance", "missing")
	}
	agg, ok, err := rp.obj("aggregate")
	if err != nil || !ok {
		return nil, rp.fieldErr("aggregate", "missing")
	}
	if rq, ok, _ := agg.obj("requests"); ok {
		pt.Requests, _, _ = rq.int("total")
		pt.Failures, _, _ = rq.int("failures")
	}
	if lat, ok, err := agg.obj("latency"); err != nil {
		return nil, err
	} else if ok {
		for _, m := range []struct {
			key string
			dst *SummaryStats
		}{{"time_to_first_token", &pt.TTFT}, {"time_per_output_token", &pt.TPOT}, {"request_latency", &pt.E2E}} {
			scale, err := latencyScale(lat, m.key)
			if err != nil {
				return nil, err
			}
			if *m.dst, err = summaryStats(lat, m.key, scale); err != nil {
				return nil, err
			}
		}
	}
	if tp, ok, _ := agg.obj("throughput"); ok {
		for _, t := range []struct {
			key string
			dst **float64
		}{{"output_token_rate", &pt.OutputTokS}, {"request_rate", &pt.RequestS}} {
			if sub, ok, _ := tp.obj(t.key); ok {
				if v, ok, err := sub.float("mean"); err != nil {
					return nil, err
				} else if ok {
					*t.dst = ptrTo(v)
				}
			}
		}
	}
	if pt.OutputTokS != nil && pt.GPUs > 0 {
		pt.OutputTokSPerGPU = ptrTo(*pt.OutputTokS / float64(pt.GPUs))
	}
	if pt.TPOT.Mean != nil && *pt.TPOT.Mean > 0 {
		pt.PerUserTokS = ptrTo(1 / *pt.TPOT.Mean)
	}
	if pt.GPUs == 0 {
		s.Missing = append(s.Missing, "the GPUs (the report's scenario has no accelerator): no per-GPU figure")
	}
	s.Points = []SummaryPoint{pt}
	return s, nil
}

// FromLLMD is llm-d-benchmark's benchmark report v0.2: summary-level only (see
// summary.go).
const FromLLMD = "llm-d"

// llmdTool is llm-d-benchmark's benchmark report v0.2 (YAML or JSON), summary-level
// only.
func llmdTool() tool {
	return tool{
		name:       FromLLMD,
		detectRank: 10,
		detect: func(h head) (bool, error) {
			yaml := bytes.Contains(h, []byte("request_performance:")) && bytes.Contains(h, []byte("scenario:")) && bytes.Contains(h, []byte("version:"))
			return yaml || (h.isJSON() && h.has("request_performance") && h.has("scenario")), nil
		},
		read:        readLLMD,
		readSummary: readLLMDSummary,
	}
}
