package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// Predicted beside measured: a planner's predicted points (prediction.Prediction) set
// against a measured run at the same concurrency, with the error of each predicted
// figure and a flag on every point the measured deployment could not have served
// as predicted: beyond what its KV cache holds, or beyond its measured realistic
// ceiling. A prediction is never mixed into the measured run's figures.

// measuredPoint is one concurrency of the measured curve (repeats averaged).
type measuredPoint struct {
	c                           float64
	tpsGPU, user                float64
	ttft, tpot                  *float64
	level                       int
	ttftN, tpotN, n, nTTFT, nTP float64
}

// ComparePrediction sets a planner's prediction beside measured run r, which was
// analyzed with opt.
func ComparePrediction(r *Run, opt Options, p *prediction.Prediction) *PredictionCheck {
	pc := &PredictionCheck{Predicted: true, Tool: p.Tool, Planner: p.Planner, Model: p.Model, GPU: p.GPU,
		PromptTokens: p.PromptTokens, OutputTokens: p.OutputTokens, MeasuredRun: r.RunID, Points: []PointCheck{},
		Flags: []string{}, Notes: []string{}}
	if len(p.Files) > 0 {
		pc.Source = p.Files[0]
	}
	pc.Mismatch = predictionMismatch(r, opt, p)
	if pc.Mismatch != "" {
		pc.Notes = append(pc.Notes, "WARNING: "+pc.Mismatch)
	}
	gpus := 0
	switch {
	case opt.GPUs > 0 || opt.TP > 0:
		gpus, pc.GPUsBasis = opt.Shape().GPUs(), "--gpus of the measured run"
	case p.GPUs > 0 && pc.Mismatch == "":
		gpus, pc.GPUsBasis = p.GPUs, "the planner's GPU count (the measured run was given no --gpus)"
		pc.Notes = append(pc.Notes, fmt.Sprintf("the measured run's per-GPU figures divide it by the planner's %d GPUs: the run was given no GPU count (give it with the deployment)", p.GPUs))
	case p.GPUs > 0:
		gpus, pc.GPUsBasis = 1, fmt.Sprintf("one GPU: the run was given no GPU count, and the planner's %d GPUs are another deployment's", p.GPUs)
		pc.Notes = append(pc.Notes, "the measured run's per-GPU figures are its whole throughput (one GPU assumed): the planner's GPU count is another deployment's; give the run's with the deployment")
	default:
		gpus, pc.GPUsBasis = 1, "one GPU (neither the measured run nor the planner gives a GPU count)"
	}
	pc.MeasuredGPUs = gpus
	curve := measuredCurve(r, float64(gpus))
	prompt, output := meanLengths(r)
	if p.PromptTokens > 0 && !math.IsNaN(prompt) && math.Abs(p.PromptTokens-prompt) > 0.1*prompt {
		pc.Notes = append(pc.Notes, fmt.Sprintf("the planner predicted %.0f-token prompts, the measured run's averaged %.0f: the errors mix in the workload's difference", p.PromptTokens, prompt))
	}
	if p.OutputTokens > 0 && !math.IsNaN(output) && math.Abs(p.OutputTokens-output) > 0.1*output {
		pc.Notes = append(pc.Notes, fmt.Sprintf("the planner predicted %.0f-token outputs, the measured run's averaged %.0f", p.OutputTokens, output))
	}
	holds, holdsKind := kvHolds(r, p)
	var errs []float64
	gpuNoted := false
	for _, pt := range p.Points {
		c := PointCheck{Label: pt.Label, Concurrency: pt.Concurrency, Config: pt.Config}
		c.Predicted.OutputTokSPerGPU = pf(pt.OutputTokSPerGPU)
		c.Predicted.PerUserTokS = pt.PerUserTokS
		c.Predicted.TTFT = msToS(pt.TTFTms)
		c.Predicted.TPOT = msToS(pt.TPOTms)
		if pt.GPUs > 0 && pt.GPUs != gpus && !gpuNoted {
			gpuNoted = true
			pc.Notes = append(pc.Notes, fmt.Sprintf("the planner's points use %d GPUs, the measured run %d: per-GPU figures are compared as they are, concurrencies as given", pt.GPUs, gpus))
		}
		m, at := curve.at(pt.Concurrency)
		c.MeasuredAt = at
		if m != nil {
			c.Measured = Figures{OutputTokSPerGPU: pf(m.tpsGPU), PerUserTokS: pf(m.user), TTFT: m.ttft, TPOT: m.tpot}
			c.ErrPct = Figures{
				OutputTokSPerGPU: errPct(c.Predicted.OutputTokSPerGPU, c.Measured.OutputTokSPerGPU),
				PerUserTokS:      errPct(c.Predicted.PerUserTokS, c.Measured.PerUserTokS),
				TTFT:             errPct(c.Predicted.TTFT, c.Measured.TTFT),
				TPOT:             errPct(c.Predicted.TPOT, c.Measured.TPOT),
			}
			if e := c.ErrPct.OutputTokSPerGPU; e != nil {
				errs = append(errs, math.Abs(*e))
			}
		}
		measuredAt := "not measured at that concurrency"
		if m != nil {
			measuredAt = fmt.Sprintf("measured %s tok/s/GPU at %s", num(m.tpsGPU), num(pt.Concurrency))
			if strings.HasPrefix(at, "interpolated") {
				measuredAt += " (" + at + ")"
			}
		} else if last := curve.last(); last != nil {
			measuredAt = fmt.Sprintf("not measured at %s; measured %s tok/s/GPU at %s, the sweep's highest", num(pt.Concurrency), num(last.tpsGPU), num(last.c))
		}
		head := fmt.Sprintf("predicted c=%s at %s tok/s/GPU (%s)", num(pt.Concurrency), num(pt.OutputTokSPerGPU), pt.Label)
		if holds != nil {
			c.KVHolds = pf(*holds)
			if pt.Concurrency > *holds*1.05 {
				c.BeyondKV = true
				pc.Flags = append(pc.Flags, fmt.Sprintf("%s: the KV cache holds ~%.0f requests of %s (%s); %s",
					head, *holds, lengthsText(p, r), holdsKind, measuredAt))
			}
		}
		if rc := r.Ceiling.Concurrency; rc != nil && pt.Concurrency > *rc*1.05 && !c.BeyondKV {
			c.BeyondCeiling = true
			pc.Flags = append(pc.Flags, fmt.Sprintf("%s: beyond the measured realistic ceiling (%s, bound by %s); %s",
				head, num(*rc), r.Ceiling.Binding, measuredAt))
		} else if rc != nil && pt.Concurrency > *rc*1.05 {
			c.BeyondCeiling = true
		}
		pc.Points = append(pc.Points, c)
	}
	if len(errs) > 0 {
		sort.Float64s(errs)
		pc.MedianAbsErrPct = pf(median(errs))
	}
	if holds == nil {
		pc.Notes = append(pc.Notes, "the measured deployment's KV capacity is unknown (give --model-config and --gpu, or record with a server that reports it): predicted points are not checked against it")
	}
	return pc
}

// measuredCurvePoints are the valid closed-loop levels by concurrency.
type measuredCurvePoints []measuredPoint

func measuredCurve(r *Run, gpus float64) measuredCurvePoints {
	by := map[int]*measuredPoint{}
	for _, l := range r.Levels {
		if !l.Valid || l.Concurrency <= 0 || l.Rate > 0 || l.OutputTokS <= 0 {
			continue
		}
		m := by[l.Concurrency]
		if m == nil {
			m = &measuredPoint{c: float64(l.Concurrency), level: l.Level}
			by[l.Concurrency] = m
		}
		m.n++
		m.tpsGPU += l.OutputTokS / gpus
		m.user += l.PerUserTokS
		if l.TTFT.P50 != nil {
			m.ttftN += *l.TTFT.P50
			m.nTTFT++
		}
		if l.TPOT.P50 != nil {
			m.tpotN += *l.TPOT.P50
			m.nTP++
		}
	}
	var out measuredCurvePoints
	for _, m := range by {
		m.tpsGPU /= m.n
		m.user /= m.n
		if m.nTTFT > 0 {
			m.ttft = pf(m.ttftN / m.nTTFT)
		}
		if m.nTP > 0 {
			m.tpot = pf(m.tpotN / m.nTP)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].c < out[j].c })
	return out
}

func (cv measuredCurvePoints) last() *measuredPoint {
	if len(cv) == 0 {
		return nil
	}
	return &cv[len(cv)-1]
}

// at is the measured curve at concurrency c: a level's figures, or linear
// interpolation between the two levels around c; nil beyond the sweep.
func (cv measuredCurvePoints) at(c float64) (*measuredPoint, string) {
	if len(cv) == 0 {
		return nil, "no valid measured level"
	}
	for i := range cv {
		if math.Abs(cv[i].c-c) < 1e-9 {
			return &cv[i], fmt.Sprintf("level %d (c=%s)", cv[i].level, num(c))
		}
	}
	if c < cv[0].c || c > cv[len(cv)-1].c {
		return nil, fmt.Sprintf("not measured: the sweep covers c=%s to %s", num(cv[0].c), num(cv[len(cv)-1].c))
	}
	i := sort.Search(len(cv), func(i int) bool { return cv[i].c > c })
	a, b := cv[i-1], cv[i]
	w := (c - a.c) / (b.c - a.c)
	lerp := func(x, y float64) float64 { return x + w*(y-x) }
	m := &measuredPoint{c: c, tpsGPU: lerp(a.tpsGPU, b.tpsGPU), user: lerp(a.user, b.user)}
	if a.ttft != nil && b.ttft != nil {
		m.ttft = pf(lerp(*a.ttft, *b.ttft))
	}
	if a.tpot != nil && b.tpot != nil {
		m.tpot = pf(lerp(*a.tpot, *b.tpot))
	}
	return m, fmt.Sprintf("interpolated between c=%s and c=%s", num(a.c), num(b.c))
}

// kvHolds is how many requests of the prediction's length (else the measured
// run's) the measured deployment's KV cache holds, and which figure says so.
func kvHolds(r *Run, p *prediction.Prediction) (*float64, string) {
	if r.Ceilings.KV == nil || r.Capacity == nil || r.Capacity.KVCapacityTokens == nil || *r.Capacity.KVCapacityTokens <= 0 {
		return nil, ""
	}
	tokens := float64(*r.Capacity.KVCapacityTokens)
	kind := "modelled"
	if r.Capacity.Source == "declared" {
		kind = "declared by the server"
	}
	if k := r.KVCheck; k != nil && k.ObservedTokens != nil && *k.ObservedTokens > 0 && float64(*k.ObservedTokens) < tokens {
		tokens, kind = float64(*k.ObservedTokens), "observed under load"
	}
	holds := *r.Ceilings.KV * tokens / float64(*r.Capacity.KVCapacityTokens)
	if p.PromptTokens > 0 && p.OutputTokens > 0 && r.Capacity.MeanRequestTokens != nil && *r.Capacity.MeanRequestTokens > 0 {
		holds *= *r.Capacity.MeanRequestTokens / (p.PromptTokens + p.OutputTokens)
	}
	return &holds, kind
}

func lengthsText(p *prediction.Prediction, r *Run) string {
	if p.PromptTokens > 0 && p.OutputTokens > 0 {
		return fmt.Sprintf("%.0f+%.0f tokens", p.PromptTokens, p.OutputTokens)
	}
	if r.Capacity != nil && r.Capacity.MeanRequestTokens != nil {
		return fmt.Sprintf("the measured run's %.0f tokens", *r.Capacity.MeanRequestTokens)
	}
	return "the measured length"
}

func msToS(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return pf(*v / 1000)
}

func errPct(pred, meas *float64) *float64 {
	if pred == nil || meas == nil || *meas == 0 {
		return nil
	}
	return pf((*pred - *meas) / *meas * 100)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// num prints a figure at a precision a reader compares by eye: whole numbers
// above 100, one decimal below.
func num(v float64) string {
	if math.Abs(v) >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// pf points at a copy of v.
func pf(v float64) *float64 { return &v }

// predictionMismatch names the planner's model and GPU beside the run's where
// either differs; "" where they agree or a side does not say.
func predictionMismatch(r *Run, opt Options, p *prediction.Prediction) string {
	var diffs []string
	if p.Model != "" && r.Model != "" && !sameModel(p.Model, r.Model) {
		diffs = append(diffs, fmt.Sprintf("model %q, the run's %q", p.Model, r.Model))
	}
	if p.GPU != "" && opt.GPU != "" && !sameGPU(p.GPU, opt.GPU) {
		diffs = append(diffs, fmt.Sprintf("GPU %q, the run's %q", p.GPU, opt.GPU))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("the planner predicted another deployment (%s): its figures are not a prediction of this run, and are compared only as another deployment's", strings.Join(diffs, "; "))
}

// sameGPU compares GPU names through the catalog where both are in it, else by
// their letters and digits without a form factor ("b200_sxm" is "B200").
func sameGPU(a, b string) bool {
	ga, ea := capacity.LookupGPU(a)
	gb, eb := capacity.LookupGPU(b)
	if ea == nil && eb == nil {
		return ga.Name == gb.Name
	}
	family := func(s string) string {
		var out []rune
		for _, c := range strings.ToLower(s) {
			if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
				out = append(out, c)
			}
		}
		f := string(out)
		for _, suffix := range []string{"sxm5", "sxm4", "sxm", "pcie", "nvl"} {
			f = strings.TrimSuffix(f, suffix)
		}
		return f
	}
	return family(a) == family(b)
}
