package importer

import (
	"fmt"
	"math"

	"github.com/ceiling-llm/ceiling/trace"
)

// Reference is one of the source tool's own summary numbers for a level, in
// ceiling's units: seconds for latencies, per second for rates, a count for
// "requests".
type Reference = trace.SourceReference

// Difference is a reference number that ceiling's analysis of the imported rows
// does not reproduce within float noise.
type Difference struct {
	Level int       `json:"level"`
	Ref   Reference `json:"reference"`
	Got   *float64  `json:"got"`  // null when ceiling has no such number for the level
	Note  string    `json:"note"` // the known definition difference, "" when none is known
}

// Comparison is the result of comparing a run's references with its analysis.
type Comparison struct {
	Tool        string       `json:"tool"`
	Checked     int          `json:"checked"`
	Differences []Difference `json:"differences"`
}

// tolerance is "float noise" for one reference: the trace stores times as integer
// nanoseconds and chunk gaps as integer microseconds, so latencies may move by up
// to half a microsecond per gap on top of float rounding; vLLM's own TPOT is
// 1.4e-6 relative off its arrays (INDEX.md of the peer results). Beyond 2 µs and
// 1e-5 relative a difference is a different definition, not noise.
func tolerance(r Reference) float64 {
	switch r.Metric {
	case "requests":
		return 0
	case "output_tok_s", "request_s":
		return 1e-9 * math.Abs(r.Value)
	}
	return 2e-6 + 1e-5*math.Abs(r.Value)
}

// Compare checks refs of one level against got, which returns ceiling's number for
// a metric and stat (ok false when it has none).
func Compare(tool string, level int, refs []Reference, got func(metric, stat string) (float64, bool)) (checked int, diffs []Difference) {
	for _, r := range refs {
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
			continue
		}
		checked++
		v, ok := got(r.Metric, r.Stat)
		if ok && math.Abs(v-r.Value) <= tolerance(r) {
			continue
		}
		d := Difference{Level: level, Ref: r, Note: definitionNote(tool, r)}
		if ok {
			d.Got = &v
		}
		diffs = append(diffs, d)
	}
	return checked, diffs
}

// String says the difference in one line, in ms for latencies.
func (d Difference) String() string {
	unit, scale := "", 1.0
	switch d.Ref.Metric {
	case "ttft", "tpot", "itl", "e2e":
		unit, scale = " ms", 1e3
	case "output_tok_s":
		unit = " tok/s"
	case "request_s":
		unit = " req/s"
	}
	got := "none"
	if d.Got != nil {
		got = fmt.Sprintf("%.6g%s", *d.Got*scale, unit)
		if d.Ref.Value != 0 {
			got += fmt.Sprintf(" (%+.3g%%)", 100*(*d.Got-d.Ref.Value)/math.Abs(d.Ref.Value))
		}
	}
	s := fmt.Sprintf("level %d %s %s: the tool says %.6g%s (%s), ceiling %s", d.Level, d.Ref.Metric, d.Ref.Stat,
		d.Ref.Value*scale, unit, d.Ref.Key, got)
	if d.Note != "" {
		s += ": " + d.Note
	}
	return s
}

// definitionNote explains the differences known to come from a tool's definitions.
func definitionNote(tool string, r Reference) string {
	switch tool {
	case FromVLLM, FromVLLMSweep, FromSGLang:
		switch r.Metric {
		case "output_tok_s", "request_s":
			return "the tool divides by its whole duration (arrival schedule, ramp-up and drain included); ceiling uses the steady-state window"
		}
	case FromGuideLLM:
		switch {
		case r.Metric == "output_tok_s" || r.Metric == "request_s":
			return "guidellm averages per-request rates; ceiling counts tokens and completions in the steady-state window"
		case r.Metric == "tpot" || r.Metric == "itl":
			return "guidellm averages over output tokens (token-weighted) and divides by all output tokens; ceiling's TPOT is per request, (E2E − TTFT)/(output − 1), and its ITL is per chunk"
		case r.Stat != "mean" && r.Stat != "value":
			return "guidellm's percentiles are order statistics without interpolation; ceiling interpolates linearly (numpy's default)"
		}
	case FromInferencePerf:
		switch r.Metric {
		case "tpot":
			return "inference-perf's TPOT is (last token time − first token time)/(output − 1); ceiling's is (E2E − TTFT)/(output − 1), and E2E ends after the stream's final chunk"
		case "itl":
			return "inference-perf pools per-token gaps, 0 for the tokens that share a chunk; ceiling pools the gaps between chunks"
		case "output_tok_s", "request_s":
			return "inference-perf divides by the stage's first send to last end; ceiling uses the steady-state window"
		}
	case FromLLMPerf, FromGenAIBench:
		switch r.Metric {
		case "output_tok_s", "request_s":
			return "the tool divides by its whole run's duration; ceiling's relative-timing level does the same, so a difference is the duration rebuilt from the summary"
		}
	case FromAIPerf:
		switch r.Metric {
		case "itl":
			return "AIPerf's inter-chunk statistics may pool or average the gaps differently from ceiling's pooled per-chunk gaps"
		case "output_tok_s", "request_s":
			return "AIPerf divides by its benchmark duration; ceiling uses the steady-state window"
		}
	}
	return ""
}
