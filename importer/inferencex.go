package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
)

// InferenceX (SemiAnalysis, formerly InferenceMAX) runs vLLM's benchmark_serving
// per configuration and concurrency and publishes one aggregated point each
// (utils/process_result.py writes agg_RESULT.json): hw (or device, hardware), conc,
// model, framework, precision, tp, ep, isl, osl, tput_per_gpu and
// output_tput_per_gpu (the throughputs divided by tp, or by the prefill and decode
// GPUs of a disaggregated run), latencies converted from ms to seconds
// (mean_ttft, median_ttft, p99_ttft, …_tpot, …_itl, …_e2el) and *_intvty =
// 1000 / tpot_ms, the per-user tokens per second. Collections are lists of such
// points; the dashboard's rows nest the numbers under "metrics". A point is a
// summary: refused as a trace, read by ReadSummary as summary-level points.

func readInferenceX(path string) (*Run, error) {
	s, err := ReadSummary(path)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: %w: InferenceX results are per-configuration summaries (%d points); import the raw vLLM benchmark_serving result each was made from, saved with --save-result --save-detailed (the points are read as summary-level points for comparisons)",
		filepath.Base(path), ErrSummaryOnly, len(s.Points))
}

func readInferenceXSummary(path string, data []byte) (*Summary, error) {
	name := filepath.Base(path)
	var raws []json.RawMessage
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(lenient(t), &raws); err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
		}
	} else {
		raws = []json.RawMessage{data}
	}
	s := &Summary{Tool: FromInferenceX, Missing: []string{"per-request records (InferenceX publishes one summary per configuration and concurrency)"}}
	for i, raw := range raws {
		where := name
		if len(raws) > 1 || (len(bytes.TrimSpace(data)) > 0 && bytes.TrimSpace(data)[0] == '[') {
			where = fmt.Sprintf("%s element %d", name, i)
		}
		o, err := decodeObject(where, raw)
		if err != nil {
			return nil, err
		}
		pt, err := inferenceXPoint(o)
		if err != nil {
			return nil, err
		}
		s.Points = append(s.Points, pt)
	}
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%s: an empty list of InferenceX points", name)
	}
	return s, nil
}

func inferenceXPoint(o object) (SummaryPoint, error) {
	pt := SummaryPoint{Label: o.where}
	m := o
	if sub, ok, err := o.obj("metrics"); err != nil {
		return pt, err
	} else if ok {
		m = sub
	}
	for _, k := range []string{"hw", "device", "hardware"} {
		if v := o.text(k); v != "" {
			pt.GPU = v
			break
		}
	}
	pt.Model = o.text("model")
	pt.Precision, pt.Framework = o.text("precision"), o.text("framework")
	for _, l := range []struct {
		key string
		dst **float64
	}{{"isl", &pt.InputTokens}, {"osl", &pt.OutputTokens}} {
		if v, ok, err := o.float(l.key); err != nil {
			return pt, err
		} else if ok && v > 0 {
			*l.dst = ptrTo(v)
		}
	}
	c, ok, err := o.float("conc")
	if err != nil {
		return pt, err
	}
	if !ok || c <= 0 || math.IsInf(c, 0) || math.IsNaN(c) {
		return pt, o.fieldErr("conc", "missing, not positive or not finite: the point's concurrency is unknown")
	}
	pt.Concurrency = c
	if p, ok, _ := o.int("num_prefill_gpu"); ok {
		d, _, _ := o.int("num_decode_gpu")
		pt.GPUs = p + d
	} else if tp, ok, err := o.int("tp"); err != nil {
		return pt, err
	} else if ok {
		pt.GPUs = tp
	}
	out, ok, err := m.float("output_tput_per_gpu")
	if err != nil {
		return pt, err
	}
	if !ok {
		return pt, m.fieldErr("output_tput_per_gpu", "missing: not an InferenceX point")
	}
	pt.OutputTokSPerGPU = ptrTo(out)
	if pt.GPUs > 0 {
		pt.OutputTokS = ptrTo(out * float64(pt.GPUs))
	}
	for _, l := range []struct {
		suffix string
		dst    *SummaryStats
	}{{"ttft", &pt.TTFT}, {"tpot", &pt.TPOT}, {"e2el", &pt.E2E}} {
		for _, st := range []struct {
			prefix string
			dst    **float64
		}{{"mean_", &l.dst.Mean}, {"median_", &l.dst.P50}, {"p90_", &l.dst.P90}, {"p99_", &l.dst.P99}} {
			if v, ok, err := m.float(st.prefix + l.suffix); err != nil {
				return pt, err
			} else if ok {
				*st.dst = ptrTo(v) // already seconds
			}
		}
	}
	if v, ok, err := m.float("median_intvty"); err != nil {
		return pt, err
	} else if ok {
		pt.PerUserTokS = ptrTo(v)
	}
	return pt, nil
}

// FromInferenceX is InferenceX's aggregated points: summary-level only (see
// summary.go).
const FromInferenceX = "inferencex"

// inferenceXTool is InferenceX's aggregated points, summary-level only.
func inferenceXTool() tool {
	return tool{
		name:       FromInferenceX,
		detectRank: 20,
		detect: func(h head) (bool, error) {
			return h.isJSON() && h.has("output_tput_per_gpu") && h.has("conc"), nil
		},
		read:        readInferenceX,
		readSummary: readInferenceXSummary,
	}
}
