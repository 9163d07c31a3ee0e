package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/engine"
)

// The review summary: the lines of the first screen that say what was measured
// (deployment, workload), read from the run's recorded metadata. Every field is
// optional; what the recorder did not write is left out, not guessed.

// runInfo is the part of the trace's ceiling.run object the summary reads.
type runInfo struct {
	Target struct {
		Endpoint string `json:"endpoint"`
		Model    string `json:"model"`
	} `json:"target"`
	Plan struct {
		Mode              string    `json:"mode"`
		Concurrency       []int     `json:"concurrency"`
		Rates             []float64 `json:"rates"`
		Auto              bool      `json:"auto"`
		RequestsPerLevel  int       `json:"requests_per_level"`
		DurationPerLevelS float64   `json:"duration_per_level_s"`
		Warmup            int       `json:"warmup"`
		PromptTokens      int       `json:"prompt_tokens"`
		OutputTokens      int       `json:"output_tokens"`
		Dataset           string    `json:"dataset"`
		SharedPrefix      int       `json:"shared_prefix_tokens"`
		IgnoreEOS         bool      `json:"ignore_eos"`
		// Workload shapes (schema version 2), in the flags' syntax.
		PromptLengths string  `json:"prompt_lengths"`
		OutputLengths string  `json:"output_lengths"`
		Turns         int     `json:"turns"`
		Prefixes      int     `json:"prefixes"`
		Burstiness    float64 `json:"burstiness"`
		Replay        string  `json:"replay"`
	} `json:"plan"`
	Server struct {
		Kind        engine.Name `json:"kind"`
		Version     string      `json:"version"`
		MaxModelLen *int64      `json:"max_model_len"`
		Slots       *int64      `json:"slots"`
		// GPUMetricsURLs are the GPU exporters the recording scraped.
		GPUMetricsURLs []string `json:"gpu_metrics_urls"`
	} `json:"server"`
	// Source names the benchmark tool whose results were imported (ceiling import).
	Source *struct {
		Tool    string `json:"tool"`
		Version string `json:"version"`
	} `json:"source"`
	Declared struct {
		GPU   string `json:"gpu"`
		GPUs  int    `json:"gpus"`
		TP    int    `json:"tp"`
		Notes string `json:"notes"`
	} `json:"declared"`
}

// readInfo decodes what it can of the run metadata; a field of another type leaves
// the summary without it rather than failing the report.
func readInfo(r *analyze.Run) runInfo {
	var info runInfo
	if len(r.Info) > 0 {
		_ = json.Unmarshal(r.Info, &info)
	}
	if info.Server.Kind == "" && len(r.Server) > 0 {
		_ = json.Unmarshal(r.Server, &info.Server)
	}
	return info
}

// deploymentLine says what served the run: model, engine and version, hardware and
// its shape, the server's own limits.
func deploymentLine(r *analyze.Run, info runInfo) string {
	var parts []string
	if r.Model != "" {
		parts = append(parts, r.Model)
	}
	if k := info.Server.Kind; k != "" && k != engine.Unknown {
		parts = append(parts, strings.TrimSpace("served by "+string(k)+" "+info.Server.Version))
	} else {
		parts = append(parts, "engine not identified")
	}
	switch {
	case r.Capacity != nil && r.Capacity.Budget != nil:
		b := r.Capacity.Budget
		parts = append(parts, fmt.Sprintf("%d × %s (%s each), TP %d", b.GPUs, b.GPU, fmtGiB(b.MemoryBytes), b.TP))
	case info.Declared.GPU != "":
		g := fmt.Sprintf("%s × %d", info.Declared.GPU, max(1, info.Declared.GPUs))
		if info.Declared.TP > 0 {
			g += fmt.Sprintf(", TP %d", info.Declared.TP)
		}
		parts = append(parts, g+" (declared)")
	default:
		parts = append(parts, "GPUs not declared")
	}
	if s := info.Server.Slots; s != nil {
		parts = append(parts, fmt.Sprintf("%d slots", *s))
	}
	if m := info.Server.MaxModelLen; m != nil {
		parts = append(parts, "max_model_len "+fmtInt(*m))
	}
	if n := len(info.Server.GPUMetricsURLs); n > 0 {
		parts = append(parts, fmt.Sprintf("GPU telemetry from %d exporter%s", n, map[bool]string{true: "s"}[n > 1]))
	}
	if src := info.Source; src != nil && src.Tool != "" {
		parts = append(parts, strings.TrimSpace("measured by "+src.Tool+" "+src.Version)+" (imported)")
	}
	line := strings.Join(parts, " · ")
	if n := strings.TrimSpace(info.Declared.Notes); n != "" {
		line += " (notes: " + n + ")"
	}
	return line
}

// workloadLine says what was sent: the sweep, the requests, the latency targets.
func workloadLine(r *analyze.Run, info runInfo) string {
	p := info.Plan
	var parts []string
	switch {
	case p.Mode == "open" || len(p.Rates) > 0:
		rates := make([]string, len(p.Rates))
		for i, v := range p.Rates {
			rates[i] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		s := "open loop"
		if len(rates) > 0 {
			s += ", " + strings.Join(rates, ", ") + " requests/s"
		}
		parts = append(parts, s)
	case len(p.Concurrency) > 0:
		cs := make([]string, len(p.Concurrency))
		for i, c := range p.Concurrency {
			cs[i] = strconv.Itoa(c)
		}
		s := "closed loop, concurrency " + strings.Join(cs, ", ")
		if p.Auto {
			s += " (auto)"
		}
		parts = append(parts, s)
	case len(r.Levels) > 0:
		parts = append(parts, fmt.Sprintf("%d levels, %s", len(r.Levels), levelSpan(r.Levels)))
	}
	switch {
	case p.RequestsPerLevel > 0:
		s := fmt.Sprintf("%d requests per level", p.RequestsPerLevel)
		if p.Warmup > 0 {
			s += fmt.Sprintf(" after %d warm-up", p.Warmup)
		}
		parts = append(parts, s)
	case p.DurationPerLevelS > 0:
		parts = append(parts, fmt.Sprintf("%s per level", fmtDur(p.DurationPerLevelS)))
	}
	prompt, output := lengthText(p.PromptLengths, p.PromptTokens), lengthText(p.OutputLengths, p.OutputTokens)
	switch {
	case p.Replay != "":
		parts = append(parts, "replay of "+p.Replay)
	case p.Dataset != "":
		parts = append(parts, "prompts from "+p.Dataset)
	case prompt != "":
		s := prompt + " prompt tokens"
		if output != "" {
			s = prompt + " prompt → " + output + " output tokens"
		}
		if p.SharedPrefix > 0 {
			s += fmt.Sprintf(" (%s shared prefix", fmtInt(int64(p.SharedPrefix)))
			if p.Prefixes > 1 {
				s += fmt.Sprintf(", %d distinct", p.Prefixes)
			}
			s += ")"
		}
		parts = append(parts, s)
	}
	if p.Turns > 1 {
		parts = append(parts, fmt.Sprintf("%d-turn conversations", p.Turns))
	}
	if p.Burstiness > 0 && p.Burstiness != 1 {
		parts = append(parts, fmt.Sprintf("gamma arrivals (burstiness %g)", p.Burstiness))
	}
	if p.IgnoreEOS {
		parts = append(parts, "EOS ignored")
	}
	if e := info.Target.Endpoint; e != "" {
		parts = append(parts, e+" endpoint")
	}
	switch t := sloText(r.SLO); {
	case r.Criteria != nil && r.Criteria.From == "recording":
		parts = append(parts, r.Criteria.Text)
	case t != "":
		parts = append(parts, "SLO "+t)
	default:
		parts = append(parts, "no latency targets")
	}
	return strings.Join(parts, " · ")
}

// lengthText is a requested length as the user gave it: the distribution ("uniform:500-4000")
// where one was asked, else the fixed count; "" when neither was recorded.
func lengthText(dist string, fixed int) string {
	switch {
	case dist != "":
		return dist
	case fixed > 0:
		return fmtInt(int64(fixed))
	}
	return ""
}
