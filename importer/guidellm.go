package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// guidellm writes benchmarks.json: {metadata{version, guidellm_version}, args (report
// version 1) or config.spec (version 2), benchmarks[]}. Each benchmark is one
// strategy (synchronous, concurrent, throughput, constant, poisson) with its
// per-request stats under requests.{successful,errored,incomplete} and its own
// statistics under metrics. A request's timings are epoch seconds: request start,
// first and last token iteration, request end. guidellm keeps no individual
// token times, so chunk gaps are interpolated evenly between the first and the
// last token, as guidellm itself does. Its statistics leave out the requests of
// the warm-up and cool-down periods (those entirely before the benchmark's
// start_time or after its end_time); they are imported as warm-up rows.

// readGuideLLM reads a guidellm benchmarks.json.
func readGuideLLM(path string) (*Run, error) {
	name := filepath.Base(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	top, err := decodeObject(name, data)
	if err != nil {
		return nil, err
	}
	run := &Run{Tool: FromGuideLLM, Files: []string{path}}
	reportVersion := 0
	if md, ok, err := top.obj("metadata"); err != nil {
		return nil, err
	} else if ok {
		run.ToolVersion, _, _ = md.str("guidellm_version")
		reportVersion, _, _ = md.int("version")
	}
	if run.ToolVersion == "" {
		run.Missing = appendNew(run.Missing, "the guidellm version")
	}
	if reportVersion != 0 {
		run.ToolVersion = strings.TrimSpace(run.ToolVersion + " (report version " + strconv.Itoa(reportVersion) + ")")
	}
	// Target and model: args (report v1) or config.spec.backend (v2).
	if args, ok, _ := top.obj("args"); ok {
		run.BaseURL, _, _ = args.str("target")
		run.Model, _, _ = args.str("model")
		run.Endpoint = endpointKind(args.text("request_format"))
	} else if cfg, ok, _ := top.obj("config"); ok {
		if spec, ok, _ := cfg.obj("spec"); ok {
			if b, ok, _ := spec.obj("backend"); ok {
				run.BaseURL, _, _ = b.str("target")
				run.Model, _, _ = b.str("model")
				run.Endpoint = endpointKind(b.text("request_format"))
			}
		}
	}
	benches, ok, err := top.array("benchmarks")
	if err != nil {
		return nil, err
	}
	if !ok || len(benches) == 0 {
		return nil, top.fieldErr("benchmarks", "missing or empty: not a guidellm benchmarks.json")
	}
	held := 0
	for i, raw := range benches {
		b, err := decodeObject(fmt.Sprintf("%s benchmarks[%d]", name, i), raw)
		if err != nil {
			return nil, err
		}
		lv, err := guidellmLevel(run, b)
		if err != nil {
			return nil, err
		}
		held += len(lv.Requests)
		run.Levels = append(run.Levels, lv)
	}
	if held == 0 {
		return nil, fmt.Errorf("%s: %w: the requests lists of all %d benchmarks are empty, so guidellm kept only its summary statistics (see its sample_requests setting)", name, ErrSummaryOnly, len(benches))
	}
	run.Warnings = appendNew(run.Warnings, "guidellm records only the first and last token time of a request: chunk gaps are interpolated evenly between them (as guidellm does), so ITL shows no jitter within a request and its percentiles are those of per-request means")
	run.Missing = appendNew(run.Missing, "individual chunk times (interpolated)", "time to first content chunk, HTTP status of failed requests")
	return run, nil
}

func endpointKind(format string) string {
	switch {
	case strings.Contains(format, "chat"):
		return "chat"
	case strings.Contains(format, "completions"):
		return "completions"
	}
	return ""
}

func guidellmLevel(run *Run, b object) (Level, error) {
	lv := Level{Label: b.where}
	if d, ok, err := b.float("duration"); err != nil {
		return lv, err
	} else if ok {
		lv.DurationS = d
	}
	winStart, _, err := b.float("start_time")
	if err != nil {
		return lv, err
	}
	winEnd, _, err := b.float("end_time")
	if err != nil {
		return lv, err
	}
	if winStart > 0 {
		lv.Started = time.Unix(0, int64(winStart*1e9)).UTC()
		if run.Started.IsZero() || lv.Started.Before(run.Started) {
			run.Started = lv.Started
		}
	}
	// The strategy: config.strategy in both report versions.
	cfg, _, err := b.obj("config")
	if err != nil {
		return lv, err
	}
	st, ok, err := cfg.obj("strategy")
	if err != nil {
		return lv, err
	}
	if !ok {
		return lv, cfg.fieldErr("strategy", "missing: the benchmark's load is unknown")
	}
	kind := st.text("type_")
	switch kind {
	case "synchronous":
		lv.Concurrency = 1
	case "concurrent":
		c, ok, err := st.int("streams")
		if err != nil {
			return lv, err
		}
		if !ok {
			if c, _, err = st.int("max_concurrency"); err != nil {
				return lv, err
			}
		}
		lv.Concurrency = c
	case "constant", "poisson", "async":
		r, ok, err := st.float("rate")
		if err != nil {
			return lv, err
		}
		if !ok || r <= 0 {
			return lv, st.fieldErr("rate", "missing or not positive for a %s strategy", kind)
		}
		lv.Rate = r
	case "throughput":
		c, _, err := st.int("max_concurrency")
		if err != nil {
			return lv, err
		}
		lv.Concurrency = c
		run.Warnings = appendNew(run.Warnings, fmt.Sprintf("%s: a throughput strategy sends as fast as it can: the level is placed at its max_concurrency %d", b.where, c))
	default:
		return lv, st.fieldErr("type_", "unknown guidellm strategy %q", kind)
	}
	if lv.Concurrency <= 0 && lv.Rate == 0 {
		return lv, st.fieldErr("max_concurrency", "missing for a %s strategy", kind)
	}

	reqs, ok, err := b.obj("requests")
	if err != nil {
		return lv, err
	}
	if !ok {
		return lv, b.fieldErr("requests", "missing")
	}
	warm := 0
	for _, status := range []string{"successful", "errored", "incomplete"} {
		list, _, err := reqs.array(status)
		if err != nil {
			return lv, err
		}
		for i, raw := range list {
			o, err := decodeObject(fmt.Sprintf("%s requests.%s[%d]", b.where, status, i), raw)
			if err != nil {
				return lv, err
			}
			r, err := guidellmRequest(o, status)
			if err != nil {
				return lv, err
			}
			end := r.SentNs + endOffsetNs(&r)
			if winEnd > winStart && (float64(end)/1e9 < winStart || float64(r.SentNs)/1e9 > winEnd) {
				r.Warmup = true
				warm++
			}
			lv.Requests = append(lv.Requests, r)
		}
	}
	if warm > 0 {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%s: %d of %d requests ran entirely in guidellm's warm-up or cool-down period; guidellm leaves them out of its statistics, and they are imported as warm-up rows", b.where, warm, len(lv.Requests)))
	}
	if lv.Rate == 0 {
		assignWorkers(lv.Requests)
	}

	if m, ok, _ := b.obj("metrics"); ok {
		for _, t := range []struct {
			key, metric string
			scale       float64
		}{
			{"time_to_first_token_ms", "ttft", 1e-3}, {"time_per_output_token_ms", "tpot", 1e-3},
			{"inter_token_latency_ms", "itl", 1e-3}, {"request_latency", "e2e", 1},
		} {
			s, ok := guidellmStats(m, t.key)
			if !ok {
				continue
			}
			for _, st := range [][2]string{{"mean", "mean"}, {"median", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}} {
				v, ok, _ := s.float(st[0])
				if !ok {
					if p, ok2, _ := s.obj("percentiles"); ok2 {
						v, ok, _ = p.float(st[0])
					}
				}
				if ok {
					lv.References = append(lv.References, Reference{Metric: t.metric, Stat: st[1], Value: v * t.scale, Key: t.key + ".successful." + st[0]})
				}
			}
			if t.metric == "ttft" {
				if n, ok, _ := s.float("count"); ok {
					lv.References = append(lv.References, Reference{Metric: "requests", Stat: "value", Value: n, Key: t.key + ".successful.count"})
				}
			}
		}
		for _, t := range [][2]string{{"output_tokens_per_second", "output_tok_s"}, {"requests_per_second", "request_s"}} {
			if s, ok := guidellmStats(m, t[0]); ok {
				if v, ok, _ := s.float("mean"); ok {
					lv.References = append(lv.References, Reference{Metric: t[1], Stat: "value", Value: v, Key: t[0] + ".successful.mean"})
				}
			}
		}
	}
	return lv, nil
}

func guidellmStats(m object, key string) (object, bool) {
	metric, ok, err := m.obj(key)
	if err != nil || !ok {
		return object{}, false
	}
	s, ok, err := metric.obj("successful")
	return s, ok && err == nil
}

// guidellmRequest reads one per-request stats object.
func guidellmRequest(o object, status string) (Request, error) {
	r := Request{Status: 200}
	timings := o
	if info, ok, err := o.obj("info"); err != nil {
		return r, err
	} else if ok {
		if t, ok, err := info.obj("timings"); err != nil {
			return r, err
		} else if ok {
			timings = t
		}
		if status != "successful" {
			r.Err = info.text("error")
		}
	}
	get := func(keys ...string) (float64, bool, error) {
		for _, src := range []object{timings, o} {
			for _, k := range keys {
				v, ok, err := src.float(k)
				if err != nil || ok {
					return v, ok, err
				}
			}
		}
		return 0, false, nil
	}
	start, ok, err := get("request_start", "request_start_time", "start_time")
	if err != nil {
		return r, err
	}
	if !ok {
		return r, timings.fieldErr("request_start", "missing: the request's send time is unknown")
	}
	end, hasEnd, err := get("request_end", "request_end_time", "end_time")
	if err != nil {
		return r, err
	}
	first, hasFirst, err := get("first_token_iteration", "first_token_time")
	if err != nil {
		return r, err
	}
	last, hasLast, err := get("last_token_iteration", "last_token_time")
	if err != nil {
		return r, err
	}
	// Epoch seconds as float64 hold about 0.2 µs at today's dates; the offsets are
	// taken in float64 before rounding.
	r.SentNs = secondsToNs(start)
	if hasEnd {
		r.E2E = ptrTo(end - start)
	}
	if v, ok, err := o.int("prompt_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Prompt = &v
	}
	if v, ok, err := o.int("output_tokens"); err != nil {
		return r, err
	} else if ok {
		r.Output = &v
	}
	if status != "successful" {
		r.Status = 0
		if r.Err == "" {
			r.Err = status
		} else {
			r.Err = status + ": " + r.Err
		}
		return r, nil
	}
	if !hasFirst {
		return r, timings.fieldErr("first_token_iteration", "missing on a successful request")
	}
	if !hasEnd {
		return r, timings.fieldErr("request_end", "missing on a successful request")
	}
	r.TTFT = ptrTo(first - start)
	chunks := 0
	if v, ok, err := timings.int("token_iterations"); err != nil {
		return r, err
	} else if ok {
		chunks = v
	} else if r.Output != nil {
		chunks = *r.Output
	}
	if hasLast && chunks > 1 && last > first {
		g := (last - first) / float64(chunks-1)
		r.Gaps = make([]float64, chunks-1)
		for i := range r.Gaps {
			r.Gaps[i] = g
		}
	}
	return r, nil
}

// FromGuideLLM is guidellm.
const FromGuideLLM = "guidellm"

// guidellmTool is guidellm's benchmarks report.
func guidellmTool() tool {
	return tool{
		name:       FromGuideLLM,
		detectRank: 80,
		detect: func(h head) (bool, error) {
			return h.isJSON() && h.has("benchmarks") && h.has("guidellm_version", "generative_benchmark"), nil
		},
		read: readGuideLLM,
		note: func(r Reference) string {
			switch {
			case r.Metric == "output_tok_s" || r.Metric == "request_s":
				return "guidellm averages per-request rates; ceiling counts tokens and completions in the steady-state window"
			case r.Metric == "tpot" || r.Metric == "itl":
				return "guidellm averages over output tokens (token-weighted) and divides by all output tokens; ceiling's TPOT is per request, (E2E − TTFT)/(output − 1), and its ITL is per chunk"
			case r.Stat != "mean" && r.Stat != "value":
				return "guidellm's percentiles are order statistics without interpolation; ceiling interpolates linearly (numpy's default)"
			}
			return ""
		},
	}
}
