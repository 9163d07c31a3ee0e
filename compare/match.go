package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/trace"
)

// NotComparableError says why two sides cannot be compared (exit code 2).
type NotComparableError struct {
	Reason string
}

func (e *NotComparableError) Error() string { return "the runs cannot be compared: " + e.Reason }

func notComparable(format string, args ...any) error {
	return &NotComparableError{Reason: fmt.Sprintf(format, args...)}
}

// pointKey is what matches a level of one side with a level of the other: the
// offered concurrency in closed loop, the offered rate in open loop.
type pointKey struct {
	concurrency int
	rate        float64
}

func (k pointKey) label() string {
	if k.rate > 0 {
		return fmt.Sprintf("rate=%g/s", k.rate)
	}
	return fmt.Sprintf("c=%d", k.concurrency)
}

// unit is one recording of a point: a level of one run. A side's units at a
// point are its repeats there (several runs, or record --repeat within one).
type unit struct {
	run   int
	level *analyze.Level
}

// points groups a side's levels by point.
func points(runs []analyze.Run) map[pointKey][]unit {
	out := map[pointKey][]unit{}
	for i := range runs {
		for j := range runs[i].Levels {
			l := &runs[i].Levels[j]
			k := pointKey{l.Concurrency, l.Rate}
			out[k] = append(out[k], unit{run: i, level: l})
		}
	}
	return out
}

// matchLevels returns the points both sides recorded, in order of offered load,
// and labels of the points only one side has.
func matchLevels(base, cand map[pointKey][]unit) (shared []pointKey, unmatched []string) {
	byLoad := func(a, b pointKey) int {
		return cmp.Or(cmp.Compare(a.rate, b.rate), cmp.Compare(a.concurrency, b.concurrency))
	}
	for _, k := range slices.SortedFunc(maps.Keys(base), byLoad) {
		if _, ok := cand[k]; ok {
			shared = append(shared, k)
		} else {
			unmatched = append(unmatched, k.label()+" (baseline only)")
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(cand), byLoad) {
		if _, ok := base[k]; !ok {
			unmatched = append(unmatched, k.label()+" (candidate only)")
		}
	}
	return shared, unmatched
}

// runInfo decodes a run's metadata; an empty object when it has none.
func runInfo(r *analyze.Run) (trace.RunInfo, error) {
	var info trace.RunInfo
	if len(r.Info) == 0 {
		return info, nil
	}
	if err := json.Unmarshal(r.Info, &info); err != nil {
		return info, fmt.Errorf("reading the run metadata of %s: %w", r.Source, err)
	}
	return info, nil
}

// field is one named fact about a run, as text.
type field struct{ name, value string }

// workloadFields are what must agree for two runs to be comparable: the requests
// the server was asked to serve (lengths, dataset, arrivals, turns, prefixes).
// The levels, their length and the seed may differ.
func workloadFields(info trace.RunInfo) []field {
	p := info.Plan
	return []field{
		{"plan.mode", p.Mode},
		{"target.endpoint", info.Target.Endpoint},
		{"plan.prompt_tokens", fmt.Sprint(p.PromptTokens)},
		{"plan.output_tokens", fmt.Sprint(p.OutputTokens)},
		{"plan.prompt_lengths", p.PromptLengths},
		{"plan.output_lengths", p.OutputLengths},
		{"plan.dataset", p.Dataset},
		{"plan.dataset_filter", p.DatasetFilter},
		{"plan.dataset_max_tokens", fmt.Sprint(p.DatasetMaxTokens)},
		{"plan.shared_prefix_tokens", fmt.Sprint(p.SharedPrefixTokens)},
		{"plan.prefixes", fmt.Sprint(p.Prefixes)},
		{"plan.prefix_mix", fmt.Sprint(p.PrefixMix)},
		{"plan.ignore_eos", fmt.Sprint(p.IgnoreEOS)},
		{"plan.turns", fmt.Sprint(p.Turns)},
		{"plan.think_time_s", fmt.Sprint(p.ThinkTimeS)},
		{"plan.burstiness", fmt.Sprint(p.Burstiness)},
		{"plan.replay", p.Replay},
		{"plan.replay_speeds", fmt.Sprint(p.ReplaySpeeds)},
	}
}

// allowedFields are what may differ and is named: usually what is being compared.
func allowedFields(r *analyze.Run, info trace.RunInfo) []field {
	d := info.Declared
	fs := []field{
		{"server", serverText(r, info)},
		{"declared GPU", gpuText(info)},
		{"declared TP/DP/PP", fmt.Sprintf("%d/%d/%d", d.TP, d.DP, d.PP)},
		{"server.kv_capacity_tokens", optText(info.Server.KVCapacityTokens)},
		{"server.slots", optText(info.Server.Slots)},
		{"server.n_ctx", optText(info.Server.NCtx)},
		{"server.max_model_len", optText(info.Server.MaxModelLen)},
		{"plan.seed", fmt.Sprint(info.Plan.Seed)},
		{"plan.requests_per_level", fmt.Sprint(info.Plan.RequestsPerLevel)},
		{"plan.duration_per_level_s", fmt.Sprint(info.Plan.DurationPerLevelS)},
		{"client.cpus", fmt.Sprint(info.Client.CPUs)},
	}
	for _, k := range slices.Sorted(maps.Keys(info.Config)) {
		if !sameAsPlan[k] {
			fs = append(fs, field{"flag " + k, info.Config[k]})
		}
	}
	return fs
}

// sameAsPlan are the record flags named elsewhere (the plan's fields, checked or
// named above) or that differ between any two recordings (the server's URL).
var sameAsPlan = map[string]bool{"url": true, "seed": true, "concurrency": true, "rate": true,
	"requests-per-level": true, "duration-per-level": true, "prompt-tokens": true, "output-tokens": true,
	"prompt-lengths": true, "output-lengths": true, "dataset": true, "model": true}

func optText(v *int64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(*v)
}

// serverText is the server's kind and version, from the run's server facts.
func serverText(r *analyze.Run, info trace.RunInfo) string {
	s := info.Server
	if s.Kind == "" && len(r.Server) > 0 {
		_ = json.Unmarshal(r.Server, &s) // best effort: only named, never required
	}
	return strings.TrimSpace(string(s.Kind) + " " + s.Version)
}

func gpuText(info trace.RunInfo) string {
	d := info.Declared
	if d.GPU == "" {
		return ""
	}
	if d.GPUs > 1 {
		return fmt.Sprintf("%d× %s", d.GPUs, d.GPU)
	}
	return d.GPU
}

// checkComparable refuses sides that cannot be compared (model or workload
// differ, within a side or across, or no level is shared) and names the allowed
// differences between the sides.
func checkComparable(base, cand []analyze.Run) (differences []string, err error) {
	if len(base) == 0 || len(cand) == 0 {
		return nil, notComparable("a side holds no run")
	}
	infos := func(runs []analyze.Run) ([]trace.RunInfo, error) {
		out := make([]trace.RunInfo, len(runs))
		for i := range runs {
			var err error
			if out[i], err = runInfo(&runs[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	bi, err := infos(base)
	if err != nil {
		return nil, err
	}
	ci, err := infos(cand)
	if err != nil {
		return nil, err
	}
	// Each side's repeats must be one configuration, then the sides one workload.
	for _, s := range []struct {
		name  string
		runs  []analyze.Run
		infos []trace.RunInfo
	}{{"baseline", base, bi}, {"candidate", cand, ci}} {
		for i := 1; i < len(s.runs); i++ {
			if why := disagreement(&s.runs[0], &s.runs[i], s.infos[0], s.infos[i]); why != "" {
				return nil, notComparable("the %s's runs are not repeats of one configuration: %s and %s differ in %s",
					s.name, s.runs[0].Source, s.runs[i].Source, why)
			}
		}
	}
	if why := disagreement(&base[0], &cand[0], bi[0], ci[0]); why != "" {
		return nil, notComparable("%s (baseline %s, candidate %s); compare runs of one model and one workload", why, base[0].Source, cand[0].Source)
	}
	ba, ca := allowedFields(&base[0], bi[0]), allowedFields(&cand[0], ci[0])
	at := map[string]string{}
	for _, f := range ca {
		at[f.name] = f.value
	}
	seen := map[string]bool{}
	for _, f := range ba {
		seen[f.name] = true
		if v := at[f.name]; v != f.value {
			differences = append(differences, fmt.Sprintf("%s: %s → %s", f.name, orUnknown(f.value), orUnknown(v)))
		}
	}
	for _, f := range ca {
		if !seen[f.name] {
			differences = append(differences, fmt.Sprintf("%s: %s → %s", f.name, orUnknown(""), orUnknown(f.value)))
		}
	}
	return differences, nil
}

func orUnknown(s string) string {
	if s == "" || s == "0" || s == "0/0/0" {
		return "—"
	}
	return s
}

// disagreement names what makes two runs incomparable: the model, or a field of
// the workload; "" when they agree. Without a plan on either side (a run decoded
// from another tool's summary), the measured mean lengths must agree within 25%.
func disagreement(a, b *analyze.Run, ai, bi trace.RunInfo) string {
	if a.Model != b.Model {
		return fmt.Sprintf("the model: %q vs %q", a.Model, b.Model)
	}
	if ai.Plan.Mode != "" && bi.Plan.Mode != "" {
		af, bf := workloadFields(ai), workloadFields(bi)
		var diffs []string
		for i := range af {
			if af[i].value != bf[i].value {
				diffs = append(diffs, fmt.Sprintf("%s %s vs %s", af[i].name, orUnknown(af[i].value), orUnknown(bf[i].value)))
			}
		}
		if len(diffs) > 0 {
			return "the workload: " + strings.Join(diffs, ", ")
		}
		return ""
	}
	for _, m := range []struct {
		name string
		get  func(analyze.Level) float64
	}{{"mean prompt tokens", func(l analyze.Level) float64 { return l.MeanPromptTokens }},
		{"mean output tokens", func(l analyze.Level) float64 { return l.MeanOutputTokens }}} {
		x, y := meanOver(a.Levels, m.get), meanOver(b.Levels, m.get)
		if x > 0 && y > 0 && (x/y > 1.25 || y/x > 1.25) {
			return fmt.Sprintf("the workload: %s %.0f vs %.0f", m.name, x, y)
		}
	}
	return ""
}

func meanOver(levels []analyze.Level, f func(analyze.Level) float64) float64 {
	var s float64
	var n int
	for _, l := range levels {
		if v := f(l); v > 0 {
			s += v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}
