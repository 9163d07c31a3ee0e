package analyze

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// The calibration of the what-if's intervals from public measurements: every
// measured point is predicted from every other measured deployment of its model,
// the way whatif predicts (the source point's share of its roofline with prefill,
// times the target deployment's roofline at the target's concurrency and lengths),
// each prediction labelled with the kind of change it crosses. The absolute log
// errors of each kind give its split-conformal interval (prediction.Conformal).
// Scoring is leave-one-deployment-out: a scored prediction's interval comes only
// from errors whose source and target are both other deployments, so no point is
// scored by an interval its own deployment helped to size. The table whatif uses
// at run time is calibrated on every error (prediction/calibration_table.go).

// valDep is one measured deployment: a model on its GPUs at one precision, shape
// and engine, from one source.
type valDep struct {
	id, source, model     string
	gpu, precision, shape string
	engine                string // the engine's family (engineFamily)
	release               string // the engine as the source names it, its release where it gives one
	plan                  *capacity.PlanResult
	roof                  *capacity.Roofline
	points                []valPt
}

// valPt is one measured point of a deployment.
type valPt struct {
	// c is the published concurrency; 0 where the source publishes none (an
	// offline maximum-throughput run), whose batch is then what the modelled KV
	// cache holds (at most 2,048 per engine, trtllm-bench's largest CUDA graph).
	c, batch       float64
	prompt, output float64
	out            float64 // output tok/s of the whole deployment
	user           float64 // per-user output tok/s; 0 where not published
	ttft           float64 // mean (or median) TTFT, s; 0 where not published
}

// valScore is one point predicted from another deployment (or another point of its own).
type valScore struct {
	kind           prediction.ChangeKind
	from, to       *valDep
	c              float64
	measured, pred float64
	// raw is the prediction before the vendor offsets (pred is after them), with
	// the FP4 compute share fitted for it.
	raw float64
	// steps is what the prediction carries at each FP4 compute share (fp4Shares),
	// to fit the share and the step overhead (at).
	steps []pointSteps
	fit   fitCandidate // the FP4 compute share and step overhead it was made with
	q     float64      // the leave-one-deployment-out half-width (log)
	uq    float64      // the same for the per-user speed
	// wide is true where the held-out errors were too few to calibrate q (it is
	// then the widest of them × 1.5).
	wide bool
	// oldCovered says whether the interval whatif gave before issue 28 held the
	// measurement: the span of the shares at the source level and its neighbouring
	// levels (same lengths), around the raw prediction.
	oldCovered bool
	// userMeasured and userPred are the per-user speed, measured and predicted
	// (0: not published, not scored); its interval is the throughput's.
	userMeasured, userPred float64
	// ttftMeasured and ttftPred are the TTFT (s), measured and predicted (0: not
	// published, or the source's is mostly queueing: not scored); tq is its
	// leave-one-deployment-out half-width (log).
	ttftMeasured, ttftPred float64
	tq                     float64
}

// at is the prediction and its per-user speed before the vendor offsets with
// the FP4 compute share and step overhead of c.
func (s valScore) at(c fitCandidate) (raw, user float64) { return s.steps[c.share].predict(c.o) }

func (s valScore) logErr() float64 { return math.Log(s.pred / s.measured) }
func (s valScore) heldOut() prediction.HeldOutError {
	return prediction.HeldOutError{AbsLog: math.Abs(s.logErr()), Deployment: s.to.id}
}
func (s valScore) hasUser() bool { return s.userMeasured > 0 && s.userPred > 0 }
func (s valScore) userHeldOut() prediction.HeldOutError {
	return prediction.HeldOutError{AbsLog: math.Abs(math.Log(s.userPred / s.userMeasured)), Deployment: s.to.id}
}
func (s valScore) covered() bool { return math.Abs(s.logErr()) <= s.q*(1+1e-12) }
func (s valScore) hasTTFT() bool { return s.ttftMeasured > 0 && s.ttftPred > 0 }
func (s valScore) ttftHeldOut() prediction.HeldOutError {
	return prediction.HeldOutError{AbsLog: math.Abs(math.Log(s.ttftPred / s.ttftMeasured)), Deployment: s.to.id}
}

// modelConfigs maps the measurements' model names to the bundled configs.
var modelConfigs = map[string]string{
	"Kimi-K2.5":     "kimi-k2.5.json",
	"gpt-oss-120b":  "gpt-oss-120b.json",
	"Llama-3.3-70B": "llama-3.1-70b.json", // the same architecture as 3.1
	"Llama-3.1-8B":  "llama-3.1-8b.json",
	// The held-out check only (heldout-dsr1.csv): R1 is DeepSeek-V3's architecture.
	"DeepSeek-R1-0528": "deepseek-v3.json",
}

// loadValidationDeployments turns the sweeps (curves) and the published rows of
// anchors.csv into deployments. Single published points without a sweep (the seed,
// aiconfigurator-1396) are bounds only (section 1), not scored.
func loadValidationDeployments(t *testing.T, curves []*valCurve) []*valDep {
	t.Helper()
	var deps []*valDep
	for _, cv := range curves {
		d := &valDep{id: cv.name, source: "curve", plan: cv.plan, roof: cv.roof, engine: "vllm"}
		switch {
		case strings.HasPrefix(cv.name, "kimi-"):
			f := strings.Split(cv.name, "-") // kimi-h200-int4-tp8
			d.model, d.gpu, d.precision, d.shape = "Kimi-K2.5", f[1], f[2], strings.ToUpper(f[3])
		case cv.name == "llama8b-h100-fp16":
			d.model, d.gpu, d.precision, d.shape = "Llama-3.1-8B", "h100-sxm", "fp16", "TP1"
		case cv.name == "llama8b-l40s-fp8":
			d.model, d.gpu, d.precision, d.shape = "Llama-3.1-8B", "l40s", "fp8", "TP1"
		default:
			t.Fatalf("curve %s: no deployment facts", cv.name)
		}
		for _, p := range cv.points {
			if p.Valid {
				d.points = append(d.points, valPt{c: p.Concurrency, batch: p.Batch, prompt: cv.prompt, output: cv.output, out: p.OutputTokS, user: p.PerUserTokS})
			}
		}
		deps = append(deps, d)
	}
	byID := map[string]*valDep{}
	for _, r := range readCSV(t, filepath.Join("testdata", "validation", "anchors.csv")) {
		switch r["source"] {
		case "inferencex-blog-gptoss120b-2026-04", "inferencex-blog-llama70b-2026-04", "inferencex-blog-kimi25-2026-04",
			"trtllm-perf-overview", "trtllm-perf-overview-v1.0":
		default:
			continue // the Kimi sweeps are curves; single points are bounds
		}
		deps = addPublishedRow(t, r, byID, deps)
	}
	return deps
}

// addPublishedRow adds one published row (anchors.csv's columns) to its
// deployment in byID, creating the deployment (appended to deps) on its first row.
func addPublishedRow(t *testing.T, r map[string]string, byID map[string]*valDep, deps []*valDep) []*valDep {
	t.Helper()
	id := strings.Join([]string{r["source"], r["model"], r["gpu"], r["precision"], r["shape"], r["engine"]}, " ")
	d := byID[id]
	if d == nil {
		in := capacity.BudgetInput{GPU: r["gpu"], GPUs: atoi(t, r["gpus"]), WeightDtype: r["precision"]}
		shapeFromLabel(t, r["shape"], &in)
		if r["model"] == "gpt-oss-120b" && r["precision"] == "mxfp4" {
			in.WeightDtype = "" // the checkpoint's own: MXFP4 experts, BF16 attention
		}
		if r["model"] == "Kimi-K2.5" && r["precision"] == "int4" {
			in.WeightDtype = "" // as the sweeps: the INT4 checkpoint its config describes
		}
		if r["model"] == "DeepSeek-R1-0528" {
			// FP8: the checkpoint its config describes (block FP8); FP4: AMD's MXFP4
			// checkpoint, the FP4 DeepSeek-R1 that runs on MI355X.
			in.WeightDtype = map[string]string{"fp8": "", "fp4": "mxfp4"}[r["precision"]]
		}
		if strings.HasPrefix(r["source"], "trtllm-perf-overview") { // both versions of the page
			// Its setup: --kv_cache_free_gpu_mem_fraction 0.95 "in many cases"; gpt-oss's
			// llm_options set an FP8 KV cache on Blackwell (auto on Hopper); the ModelOpt
			// FP8/FP4 Llama checkpoints quantize the KV cache to FP8.
			in.Utilization = 0.95
			if r["model"] == "Llama-3.3-70B" || strings.Contains(r["gpu"], "b200") {
				in.KVDtype = "fp8"
			}
		}
		cfg := modelConfigs[r["model"]]
		d = &valDep{id: shortID(r), source: r["source"], model: r["model"], gpu: r["gpu"], precision: r["precision"],
			shape: r["shape"], engine: engineFamily(r["engine"]), release: r["engine"], plan: valPlan(t, cfg, in), roof: valRoofline(t, cfg, in)}
		byID[id] = d
		deps = append(deps, d)
	}
	p := valPt{prompt: atof(t, r["isl"]), output: atof(t, r["osl"])}
	gpus := atof(t, r["gpus"])
	if v := r["output_tok_s_per_gpu"]; v != "" {
		p.out = atof(t, v) * gpus
	} else {
		p.out = atof(t, r["total_tok_s_per_gpu"]) * gpus * p.output / (p.prompt + p.output)
	}
	if v := r["tok_s_per_user"]; v != "" {
		p.user = atof(t, v)
	}
	if v := r["mean_ttft_ms"]; v != "" {
		p.ttft = atof(t, v) / 1000
	}
	if v := r["concurrency"]; v != "" {
		p.c = atof(t, v)
		p.batch = p.c
		if r["tok_s_per_user"] != "" && r["mean_ttft_ms"] != "" {
			// Little's law over a request's life: the share of it spent decoding.
			decode := p.output / atof(t, r["tok_s_per_user"])
			p.batch = p.c * decode / (decode + atof(t, r["mean_ttft_ms"])/1000)
		}
	} else {
		p.batch = maxBatch(d.plan, p.prompt, p.output)
	}
	d.points = append(d.points, p)
	return deps
}

// maxBatch is the batch of an offline maximum-throughput run as the capacity model
// sees it: what the KV caches hold of these requests, at most 2,048 per cache.
func maxBatch(plan *capacity.PlanResult, prompt, output float64) float64 {
	holds := plan.Concurrency(prompt + output/2)
	return math.Max(1, math.Min(holds, 2048*float64(plan.Shape.KVCaches())))
}

func shapeFromLabel(t *testing.T, label string, in *capacity.BudgetInput) {
	t.Helper()
	switch {
	case strings.HasPrefix(label, "DEP"): // attention DP + expert parallel, TP 1 per rank
		in.DP, in.TP, in.EP = atoi(t, strings.TrimPrefix(label, "DEP")), 1, true
	case strings.Contains(label, "EP"): // TPnEPn: attention TP n, the experts spread over the same n GPUs
		f := strings.Split(strings.TrimPrefix(label, "TP"), "EP")
		in.TP, in.EP = atoi(t, f[0]), true
		if atoi(t, f[1]) != in.TP {
			t.Fatalf("shape %q: EP over other GPUs than TP", label)
		}
	case strings.Contains(label, "PP"):
		f := strings.Split(strings.TrimPrefix(label, "TP"), "PP")
		in.TP, in.PP = atoi(t, f[0]), atoi(t, f[1])
	case strings.HasPrefix(label, "TP"):
		in.TP = atoi(t, strings.TrimPrefix(label, "TP"))
	default:
		t.Fatalf("shape %q: want TPn, DEPn, TPnEPn or TPnPPm", label)
	}
}

// engineFamily folds an engine's versions and front ends: TensorRT-LLM served
// (InferenceX's "trt") and its offline bench are one family.
func engineFamily(e string) string {
	switch {
	case strings.HasPrefix(e, "vllm"):
		return "vllm"
	case strings.HasPrefix(e, "trt"):
		return "trt-llm"
	case strings.HasPrefix(e, "sglang"):
		return "sglang"
	case strings.HasPrefix(e, "atom"):
		return "atom"
	}
	return e
}

func shortID(r map[string]string) string {
	src := map[string]string{"inferencex-blog-gptoss120b-2026-04": "inferencex", "inferencex-blog-llama70b-2026-04": "inferencex", "inferencex-blog-kimi25-2026-04": "inferencex",
		"trtllm-perf-overview": "trtllm-perf", "trtllm-perf-overview-v1.0": "trtllm-perf-v1.0",
		"inferencex-app-fixture-44c8e03e": "inferencex", "inferencex-app-fixture-a369c398": "inferencex"}[r["source"]]
	if src == "" {
		src = r["source"]
	}
	return fmt.Sprintf("%s %s %s %s %s %s", src, r["model"], r["gpu"], r["precision"], r["shape"], r["engine"])
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("validation figure %q: %v", s, err)
	}
	return v
}

// changeKind labels a prediction from deployment a's point to deployment b's by
// the widest change it crosses.
func changeKind(a, b *valDep, from, to valPt) prediction.ChangeKind {
	switch {
	case a.gpu != b.gpu && (vendorOf(a) == "amd" || vendorOf(b) == "amd"):
		return prediction.ChangeGPUAMD
	case a.gpu != b.gpu:
		return prediction.ChangeGPU
	case a.precision != b.precision || a.shape != b.shape:
		return prediction.ChangePrecision
	case a != b: // the same GPU, precision and shape: another release or publisher of the engine
		return prediction.ChangeEngine
	case from.prompt != to.prompt || from.output != to.output:
		return prediction.ChangeLengths
	}
	return prediction.ChangeConcurrency
}

// predictPoint predicts b's point to from a's point from, as whatif does: from's
// share of its roofline with prefill times b's roofline at to's lengths, at the
// batch from ran scaled to to's concurrency (the modelled maximum batch where to
// publishes none), capped by what b's KV cache holds. user is the per-user speed
// predicted the same way (0 where from has none).
//
// fp4 is the share of the FP4 peak FLOP/s both rooflines count on
// (predictingRoofline; prediction.ComputeShare at run time), o the fixed step
// overhead taken off from's steps and added to the predicted ones, each by its
// deployment's pipeline stages (carryStep; prediction.StepOverhead at run time).
func predictPoint(a, b *valDep, from, to valPt, fp4 float64, o prediction.Overhead) (out, user float64) {
	return carriedSteps(a, b, from, to, fp4).predict(o)
}

// pointSteps is what a prediction carries at one FP4 compute share: the batch it
// predicts at, the source's measured steps and both rooflines' steps and stages.
// The overhead is applied last (predict), so the fit of the overhead does not
// recompute the rooflines.
type pointSteps struct {
	batch            float64
	outS, userS      float64 // the measured step by the output tok/s and by the per-user speed (0: none)
	srcRoof, dstRoof float64
	srcPP, dstPP     int
	// ttft is the TTFT predicted as whatif predicts it: the source's times the
	// ratio of the rooflines' prefill times (0: the source has none, or its TTFT
	// is mostly queueing, which whatif does not carry).
	ttft float64
}

// carriedSteps is predictPoint's work up to the overhead.
func carriedSteps(a, b *valDep, from, to valPt, fp4 float64) pointSteps {
	share := func(dtype string) float64 {
		if dtype == "fp4" {
			return fp4
		}
		return 1
	}
	ra, rb := predictingRoofline(a.roof, share), predictingRoofline(b.roof, share)
	src := ra.AtWorkload(from.batch, from.prompt, from.output)
	batch := to.batch // modelled, for a point without a published concurrency
	switch {
	case to.c > 0 && from.c > 0:
		batch = from.batch * to.c / from.c
	case to.c > 0:
		batch = to.c
	}
	if holds := b.plan.Concurrency(to.prompt + to.output/2); holds > 0 && batch > holds {
		batch = holds
	}
	dst := rb.AtWorkload(batch, to.prompt, to.output)
	p := pointSteps{batch: batch, outS: from.batch / from.out, srcRoof: src.StepS, dstRoof: dst.StepS, srcPP: ra.Shape.PP, dstPP: rb.Shape.PP}
	if from.ttft > 0 && !queueingSource(a, from) {
		if pa, pb := ra.PrefillS(from.prompt), rb.PrefillS(to.prompt); pa > 0 && pb > 0 {
			p.ttft = from.ttft * pb / pa
		}
	}
	if from.user > 0 {
		p.userS = 1 / from.user
	}
	return p
}

// queueingSource says whether from's TTFT is mostly queueing: more than
// queueingTTFT times the TTFT at a's lowest concurrency with the same lengths,
// where whatif predicts no TTFT.
func queueingSource(a *valDep, from valPt) bool {
	low := valPt{}
	for _, p := range a.points {
		if p.ttft > 0 && p.prompt == from.prompt && p.output == from.output && (low.ttft == 0 || p.c < low.c) {
			low = p
		}
	}
	return low.ttft > 0 && from.ttft > queueingTTFT*low.ttft
}

// predict is the output and per-user speed predicted with the overhead o.
func (p pointSteps) predict(o prediction.Overhead) (out, user float64) {
	fromO, toO := o.S(p.srcPP), o.S(p.dstPP)
	if st := carryStep(p.outS, p.srcRoof, p.dstRoof, fromO, toO); st > 0 {
		out = p.batch / st
	}
	if p.userS > 0 {
		if st := carryStep(p.userS, p.srcRoof, p.dstRoof, fromO, toO); st > 0 {
			user = 1 / st
		}
	}
	return out, user
}

// maxConcurrencyRatio is how far apart two published concurrencies may be for one
// to predict the other. whatif predicts each measured level at its own concurrency;
// the public single points sit at the concurrency their publisher found best, so
// a little spread is allowed, not a jump from c=64 to an offline batch of thousands.
const maxConcurrencyRatio = 4

// nearestSource is the point of a to predict to from: the same lengths where a has
// them, then the nearest concurrency (by ratio); never to itself. A point with a
// published concurrency is predicted only from one within maxConcurrencyRatio of it,
// and an offline maximum-throughput point (no concurrency) only from another.
func nearestSource(a *valDep, to *valPt) (valPt, bool) {
	best, cost := valPt{}, math.Inf(1)
	for i := range a.points {
		p := &a.points[i]
		if p == to || (p.c > 0) != (to.c > 0) || (p.c > 0 && math.Abs(math.Log(p.c/to.c)) > math.Log(maxConcurrencyRatio)+1e-9) {
			continue
		}
		k := math.Abs(math.Log(p.batch / to.batch))
		if p.c > 0 && to.c > 0 {
			k = math.Abs(math.Log(p.c / to.c))
		}
		if p.prompt != to.prompt || p.output != to.output {
			k += 100 + math.Abs(math.Log((p.prompt+p.output)/(to.prompt+to.output)))
		}
		if k < cost {
			best, cost = *p, k
		}
	}
	return best, !math.IsInf(cost, 1)
}

// oldSpread is the interval whatif gave before issue 28, relative to the
// prediction from point from: the lowest and highest share of the roofline among
// from and its neighbouring levels of a (same lengths, by concurrency) ÷ from's.
func oldSpread(a *valDep, from valPt) (lo, hi float64) {
	share := func(p valPt) float64 { return p.out / a.roof.AtWorkload(p.batch, p.prompt, p.output).TotalTokS }
	var same []valPt
	for _, p := range a.points {
		if p.prompt == from.prompt && p.output == from.output && (p.c > 0) == (from.c > 0) {
			same = append(same, p)
		}
	}
	sort.Slice(same, func(i, j int) bool { return same[i].c < same[j].c })
	s0 := share(from)
	lo, hi = 1, 1
	for i, p := range same {
		if p.c != from.c || p.out != from.out {
			continue
		}
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(same) {
				lo, hi = math.Min(lo, share(same[j])/s0), math.Max(hi, share(same[j])/s0)
			}
		}
	}
	return lo, hi
}

// scoreDeployments predicts every point of every deployment from every deployment
// of its model (itself included, for another concurrency or other lengths), and
// gives each prediction its leave-one-deployment-out interval.
func scoreDeployments(deps []*valDep) []valScore {
	var scores []valScore
	for _, b := range deps {
		for i := range b.points {
			to := &b.points[i]
			for _, a := range deps {
				if a.model != b.model {
					continue
				}
				from, ok := nearestSource(a, to)
				if !ok {
					continue
				}
				// Before issue 28: the whole FP4 peak, and the old interval.
				v, u := predictPoint(a, b, from, *to, 1, prediction.Overhead{})
				lo, hi := oldSpread(a, from)
				s := valScore{kind: changeKind(a, b, from, *to), from: a, to: b, c: to.c, measured: to.out, pred: v, raw: v,
					oldCovered: v*lo <= to.out*(1+1e-9) && to.out <= v*hi*(1+1e-9), userMeasured: to.user, userPred: u, ttftMeasured: to.ttft}
				for _, f := range fp4Shares() {
					s.steps = append(s.steps, carriedSteps(a, b, from, *to, f))
				}
				scores = append(scores, s)
			}
		}
	}
	// The FP4 compute share and the vendor offsets of a prediction a → b are
	// fitted without a and b.
	type pair struct{ a, b *valDep }
	type fit struct {
		c fitCandidate
		d float64
	}
	fits := map[pair]fit{}
	for i := range scores {
		s := &scores[i]
		k := pair{s.from, s.to}
		f, ok := fits[k]
		if !ok {
			share, off := fitComputeShare(scores, func(o valScore) bool {
				return o.from != k.a && o.from != k.b && o.to != k.a && o.to != k.b
			})
			f = fit{share, off[vendorOf(s.from)] - off[vendorOf(s.to)]}
			fits[k] = f
		}
		var user float64
		s.fit = f.c
		s.raw, user = s.at(f.c)
		s.ttftPred = s.steps[f.c.share].ttft
		s.pred = s.raw * math.Exp(-f.d)
		s.userPred = user * math.Exp(-f.d)
	}
	// Leave one deployment out: the interval of a prediction a → b is calibrated on
	// the errors of its kind between deployments other than a and b.
	type key struct {
		kind prediction.ChangeKind
		a, b *valDep
	}
	cache := map[key]prediction.Calibration{}
	for i := range scores {
		s := &scores[i]
		k := key{s.kind, s.from, s.to}
		cal, ok := cache[k]
		if !ok {
			var errs, users, ttfts []prediction.HeldOutError
			for _, o := range scores {
				if o.kind == s.kind && o.from != s.from && o.from != s.to && o.to != s.from && o.to != s.to {
					errs = append(errs, o.heldOut())
					if o.hasUser() {
						users = append(users, o.userHeldOut())
					}
					if o.hasTTFT() {
						ttfts = append(ttfts, o.ttftHeldOut())
					}
				}
			}
			cal = prediction.Conformal(s.kind, errs, prediction.NominalCoverage)
			u := prediction.Conformal(s.kind, users, prediction.NominalCoverage)
			cal.PerUser = &u
			tt := prediction.Conformal(s.kind, ttfts, prediction.NominalCoverage)
			cal.TTFT = &tt
			cache[k] = cal
		}
		s.q, s.wide, s.uq, s.tq = cal.LogHalfWidth, !cal.Calibrated, cal.User().LogHalfWidth, cal.TimeToFirstToken().LogHalfWidth
	}
	return scores
}

// goalMedian is the goal for the median absolute error of a kind (0: none).
func goalMedian(k prediction.ChangeKind) float64 {
	switch k {
	case prediction.ChangeGPU, prediction.ChangeGPUAMD:
		return 15
	case prediction.ChangePrecision, prediction.ChangeLengths:
		return 20
	}
	return 0
}

// writeCalibratedScores writes sections 2 and 3 and returns the table whatif uses.
func writeCalibratedScores(doc *strings.Builder, scores []valScore) []prediction.Calibration {
	type agg struct {
		abs                       []float64
		rawAbs                    []float64 // without the vendor factor
		userAbs                   []float64
		userErrs                  []prediction.HeldOutError
		userCovered               int
		ttftAbs                   []float64
		ttftErrs                  []prediction.HeldOutError
		ttftCovered, ttftOld      int // in its own held-out interval, in the throughput's
		errs                      []prediction.HeldOutError
		covered, wide, oldCovered int
		targets                   map[*valDep]bool
	}
	kinds := map[prediction.ChangeKind]*agg{}
	type pairKey struct {
		kind prediction.ChangeKind
		to   *valDep
	}
	perTarget := map[pairKey]*agg{}
	add := func(g *agg, s valScore) {
		g.abs = append(g.abs, math.Abs(s.pred-s.measured)/s.measured*100)
		g.rawAbs = append(g.rawAbs, math.Abs(s.raw-s.measured)/s.measured*100)
		if s.hasUser() {
			g.userAbs = append(g.userAbs, math.Abs(s.userPred-s.userMeasured)/s.userMeasured*100)
			g.userErrs = append(g.userErrs, s.userHeldOut())
			if math.Abs(math.Log(s.userPred/s.userMeasured)) <= s.uq*(1+1e-12) {
				g.userCovered++
			}
		}
		if s.hasTTFT() {
			e := s.ttftHeldOut()
			g.ttftAbs = append(g.ttftAbs, math.Abs(s.ttftPred-s.ttftMeasured)/s.ttftMeasured*100)
			g.ttftErrs = append(g.ttftErrs, e)
			if e.AbsLog <= s.tq*(1+1e-12) {
				g.ttftCovered++
			}
			if e.AbsLog <= s.q*(1+1e-12) {
				g.ttftOld++
			}
		}
		g.errs = append(g.errs, s.heldOut())
		g.targets[s.to] = true
		if s.covered() {
			g.covered++
		}
		if s.wide {
			g.wide++
		}
		if s.oldCovered {
			g.oldCovered++
		}
	}
	for _, s := range scores {
		if kinds[s.kind] == nil {
			kinds[s.kind] = &agg{targets: map[*valDep]bool{}}
		}
		add(kinds[s.kind], s)
		pk := pairKey{s.kind, s.to}
		if perTarget[pk] == nil {
			perTarget[pk] = &agg{targets: map[*valDep]bool{}}
		}
		add(perTarget[pk], s)
	}
	var table []prediction.Calibration
	var missed []string
	doc.WriteString("## 2. What-ifs scored, by kind of change\n\n")
	doc.WriteString("Every measured point is predicted from every other measured deployment of its model (and from the nearest other point of its own deployment, for another concurrency or other lengths). A prediction is labelled by the widest change it crosses: another GPU; else another precision or shape (weights, KV or parallelism) on the same GPU; else another engine release or publisher (same GPU, precision and shape, another release of the engine or another source); else other request lengths; else another concurrency. Error = (predicted − measured) ÷ measured.\n\n")
	doc.WriteString("**Held-out coverage** is leave-one-deployment-out: the interval of a prediction from deployment A to deployment B is the split-conformal 80% quantile of the absolute log errors of its kind among predictions that involve neither A nor B, so no scored point's interval was sized with its own deployment's errors (or its source's). The interval before issue 28 (the span of the shares at the source level and its neighbouring levels, around the prediction without the vendor factor) is scored on the same predictions for comparison. Coverage is shown per point and with each target deployment weighing one (the mean of its deployments' coverages); a goal of coverage is met only where both reach 80%. The last columns give the interval calibrated on every error of this section: what whatif used until the second test set was scored (section 5); the one it uses now adds that set's errors (section 6).\n\n")
	doc.WriteString("| change | predictions | target deployments | median abs. error | worst abs. error | median abs. error without the vendor factor | held-out coverage (nominal 80%) | held-out coverage, each deployment weighing one | held-out intervals too thin to calibrate | coverage of the interval before issue 28 | per-user speed: median abs. error, held-out coverage of its own interval | interval from this section's errors | calibrated from | goal | verdict |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|\n")
	for _, k := range prediction.ChangeKinds() {
		g := kinds[k]
		if g == nil {
			c := prediction.IntervalFor(k)
			lo, hi := c.Bounds(1)
			fmt.Fprintf(doc, "| %s | 0 | 0 | — | — | — | — | — | — | — | — | ×%.2f–×%.2f | no public pair: a factor of 3 either way | coverage ≥ 80%% | NOT met: no data |\n", k.Describe(), lo, hi)
			continue
		}
		cal := prediction.Conformal(k, g.errs, prediction.NominalCoverage)
		if len(g.userErrs) > 0 {
			u := prediction.Conformal(k, g.userErrs, prediction.NominalCoverage)
			cal.PerUser = &u
		}
		if len(g.ttftErrs) > 0 {
			tt := prediction.Conformal(k, g.ttftErrs, prediction.NominalCoverage)
			cal.TTFT = &tt
		}
		table = append(table, cal)
		lo, hi := cal.Bounds(1)
		from := fmt.Sprintf("%d errors, %d deployments", cal.Errors, cal.Deployments)
		if !cal.Calibrated {
			from = fmt.Sprintf("too few (%d errors, %d deployments): widest × %.1f", cal.Errors, cal.Deployments, prediction.UncalibratedWidening)
		}
		med, cov := valMedian(g.abs), float64(g.covered)/float64(len(g.abs))*100
		// Each target deployment weighing one, as the calibration weighs them.
		depCov := 0.0
		for pk, pg := range perTarget {
			if pk.kind == k {
				depCov += float64(pg.covered) / float64(len(pg.abs))
			}
		}
		depCov = depCov / float64(len(g.targets)) * 100
		cov = math.Min(cov, depCov)
		goal, verdict := "coverage ≥ 80%", verdictOf(cov >= 80)
		if m := goalMedian(k); m > 0 {
			goal = fmt.Sprintf("median ≤ %.0f%%, coverage ≥ 80%%", m)
			verdict = fmt.Sprintf("median %s, coverage %s", verdictOf(med <= m), verdictOf(cov >= 80))
		}
		user := "—"
		if len(g.userAbs) > 0 {
			ulo, uhi := cal.User().Bounds(1)
			user = fmt.Sprintf("%.0f%%, %s; from this section ×%.2f–×%.2f", valMedian(g.userAbs), pctOf(g.userCovered, len(g.userAbs)), ulo, uhi)
		}
		if m := goalMedian(k); m > 0 && med > m {
			missed = append(missed, fmt.Sprintf("%s: median absolute error %.0f%%, goal ≤ %.0f%%", k.Describe(), med, m))
		}
		if cov < 80 {
			missed = append(missed, fmt.Sprintf("%s: held-out coverage %s (the lower of per point and per deployment), goal ≥ 80%%", k.Describe(), belowGoal(cov)))
		}
		if n := len(g.userAbs); n > 0 && float64(g.userCovered)/float64(n) < 0.8 {
			missed = append(missed, fmt.Sprintf("%s: per-user speed's held-out coverage %s, goal ≥ 80%%", k.Describe(), belowGoal(float64(g.userCovered)/float64(n)*100)))
		}
		fmt.Fprintf(doc, "| %s | %d | %d | %.0f%% | %.0f%% | %.0f%% | %s | %.0f%% | %d | %s | %s | ×%.2f–×%.2f | %s | %s | %s |\n", k.Describe(), len(g.abs), len(g.targets), med, maxOf(g.abs),
			valMedian(g.rawAbs), pctOf(g.covered, len(g.abs)), depCov, g.wide, pctOf(g.oldCovered, len(g.abs)), user, lo, hi, from, goal, verdict)
	}
	doc.WriteString("\nGoals missed, plainly:\n\n")
	for _, m := range missed {
		fmt.Fprintf(doc, "- %s\n", m)
	}
	// The engine kind's pairs are one engine family's releases or publishers, never
	// two engines: a switch of engine family has no calibration at all.
	doc.WriteString("- a switch of engine family (vLLM ↔ SGLang ↔ TensorRT-LLM): no public pair measures one GPU, precision and shape on two engines at comparable concurrencies; uncalibrated (`whatif` has no such change; another engine release or publisher is scored above on one engine family's pairs: TensorRT-LLM's performance page at v1.0 and later, InferenceX's vLLM runs of 2026-03/04 and 2026-05)\n")
	// TTFT: predicted as whatif predicts it (the source's TTFT times the ratio of
	// the rooflines' prefill times), on the points that publish one.
	doc.WriteString("\nTTFT, where the public points publish one (InferenceX's: mean or median TTFT), predicted as whatif predicts it: the source's TTFT times the ratio of the two rooflines' prefill times, none where the source's TTFT is mostly queueing (over 3× its deployment's lowest concurrency's). Until issue 28's second test set whatif gave TTFT the throughput's interval; it now has its own, calibrated the same way on the TTFT errors.\n\n")
	doc.WriteString("| change | predictions | target deployments | median abs. error | held-out coverage of its own interval | held-out coverage of the throughput's interval | interval from this section's errors |\n|---|---:|---:|---:|---:|---:|---|\n")
	for _, k := range prediction.ChangeKinds() {
		g := kinds[k]
		if g == nil || len(g.ttftErrs) == 0 {
			fmt.Fprintf(doc, "| %s | 0 | 0 | — | — | — | — |\n", k.Describe())
			continue
		}
		c := prediction.Conformal(k, g.ttftErrs, prediction.NominalCoverage)
		lo, hi := c.Bounds(1)
		width := fmt.Sprintf("×%.2f–×%.2f", lo, hi)
		if !c.Calibrated {
			width += fmt.Sprintf(" (too few: %d errors, %d deployments)", c.Errors, c.Deployments)
		}
		fmt.Fprintf(doc, "| %s | %d | %d | %.0f%% | %s | %s | %s |\n", k.Describe(), len(g.ttftErrs), c.Deployments, valMedian(g.ttftAbs),
			pctOf(g.ttftCovered, len(g.ttftErrs)), pctOf(g.ttftOld, len(g.ttftErrs)), width)
	}
	doc.WriteString("\n## 3. By kind of change and target deployment\n\n")
	doc.WriteString("| change | target deployment | predictions | median abs. error | worst abs. error | held-out coverage |\n|---|---|---:|---:|---:|---:|\n")
	var keys []pairKey
	for k := range perTarget {
		keys = append(keys, k)
	}
	order := map[prediction.ChangeKind]int{}
	for i, k := range prediction.ChangeKinds() {
		order[k] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return order[keys[i].kind] < order[keys[j].kind]
		}
		return keys[i].to.id < keys[j].to.id
	})
	for _, k := range keys {
		g := perTarget[k]
		fmt.Fprintf(doc, "| %s | %s | %d | %.0f%% | %.0f%% | %s |\n", k.kind.Describe(), k.to.id, len(g.abs), valMedian(g.abs), maxOf(g.abs), pctOf(g.covered, len(g.abs)))
	}
	return table
}

func verdictOf(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func valMedian(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	return (s[(n-1)/2] + s[n/2]) / 2
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// checkCalibrationTable writes prediction/calibration_table.go from the table
// (with -update) or checks that it is current.
func checkCalibrationTable(table []prediction.Calibration, vendors map[string]float64, fit fitCandidate, update bool) error {
	var b bytes.Buffer
	b.WriteString("// Code generated by go test ./analyze -run TestValidation -update; DO NOT EDIT.\n\npackage prediction\n\n")
	b.WriteString("// calibrationTable is the interval of each kind of change, calibrated on every\n// held-out error of analyze/testdata/validation (docs/validation.md).\n")
	b.WriteString("func calibrationTable() []Calibration {\n\treturn []Calibration{\n")
	for _, c := range table {
		user := ""
		if u := c.PerUser; u != nil {
			user = fmt.Sprintf(", PerUser: &Calibration{Kind: %q, Nominal: %g, Errors: %d, Deployments: %d, Campaigns: %d, LogHalfWidth: %s, Calibrated: %t, HeldOutCoverage: %g}",
				string(u.Kind), u.Nominal, u.Errors, u.Deployments, u.Campaigns, strconv.FormatFloat(u.LogHalfWidth, 'g', 6, 64), u.Calibrated, u.HeldOutCoverage)
		}
		if u := c.TTFT; u != nil {
			user += fmt.Sprintf(", TTFT: &Calibration{Kind: %q, Nominal: %g, Errors: %d, Deployments: %d, Campaigns: %d, LogHalfWidth: %s, Calibrated: %t, HeldOutCoverage: %g}",
				string(u.Kind), u.Nominal, u.Errors, u.Deployments, u.Campaigns, strconv.FormatFloat(u.LogHalfWidth, 'g', 6, 64), u.Calibrated, u.HeldOutCoverage)
		}
		if len(c.TestSets) > 0 {
			user += ", TestSets: []TestScore{"
			for i, ts := range c.TestSets {
				if i > 0 {
					user += ", "
				}
				user += fmt.Sprintf("{Set: %q, Points: %d, Covered: %d, MedianAbsErr: %s", ts.Set, ts.Points, ts.Covered, strconv.FormatFloat(ts.MedianAbsErr, 'g', 6, 64))
				if ts.Note != "" {
					user += fmt.Sprintf(", Note: %q", ts.Note)
				}
				if r := ts.SameRelease; r != nil {
					user += fmt.Sprintf(", SameRelease: &TestScore{Points: %d, Covered: %d, MedianAbsErr: %s}", r.Points, r.Covered, strconv.FormatFloat(r.MedianAbsErr, 'g', 6, 64))
				}
				user += "}"
			}
			user += "}"
		}
		fmt.Fprintf(&b, "\t\t{Kind: %q, Nominal: %g, Errors: %d, Deployments: %d, Campaigns: %d, LogHalfWidth: %s, Calibrated: %t, HeldOutCoverage: %g%s},\n",
			string(c.Kind), c.Nominal, c.Errors, c.Deployments, c.Campaigns, strconv.FormatFloat(c.LogHalfWidth, 'g', 6, 64), c.Calibrated, c.HeldOutCoverage, user)
	}
	b.WriteString("\t}\n}\n\n")
	b.WriteString("// vendorOffsetTable is the log offset of the share of the roofline each vendor's\n// GPUs reach, fitted on every held-out error that crosses vendors (docs/predictions.md).\n")
	b.WriteString("func vendorOffsetTable() map[string]float64 {\n\treturn map[string]float64{\n")
	var names []string
	for v := range vendors {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		fmt.Fprintf(&b, "\t\t%q: %s,\n", v, strconv.FormatFloat(vendors[v], 'g', 6, 64))
	}
	b.WriteString("\t}\n}\n\n")
	b.WriteString("// computeShareTable is the share of each tensor-core dtype's peak FLOP/s that\n// predictions count on, fitted with the vendor offsets on every held-out error\n// (docs/predictions.md).\n")
	fmt.Fprintf(&b, "func computeShareTable() map[string]float64 {\n\treturn map[string]float64{%q: %s}\n}\n\n", "fp4", strconv.FormatFloat(fit.fp4(), 'g', 6, 64))
	b.WriteString("// stepOverheadTable is the fixed time of a decode step (s) that does not scale\n// with the GPU, fitted with the FP4 compute share and the vendor offsets on every\n// held-out error (docs/predictions.md).\n")
	fmt.Fprintf(&b, "func stepOverheadTable() Overhead {\n\treturn Overhead{StepS: %s, ExtraStageS: %s}\n}\n", strconv.FormatFloat(fit.o.StepS, 'g', 6, 64), strconv.FormatFloat(fit.o.ExtraStageS, 'g', 6, 64))
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	path := filepath.Join("..", "prediction", "calibration_table.go")
	if update {
		return os.WriteFile(path, src, 0o644)
	}
	have, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(have, src) {
		return fmt.Errorf("prediction/calibration_table.go is not current: run go test ./analyze -run TestValidation -update")
	}
	return nil
}

const validationWeak = `
## Where the model is weak

- **The share of the roofline does not carry across kernels.** Another GPU, precision
  or engine changes the kernels, the attention backend and the scheduler: the share a
  deployment reaches moves with them, and the roofline knows bytes and FLOPs, not
  kernel quality. The only such effects the public data pins down are the vendor's (AMD's
  GPUs reach about 0.73× NVIDIA's share), the FP4 tensor cores' (counted at about
  0.75 of their peak FLOP/s where a prediction is compute-bound) and a fixed
  step overhead (about 5 ms of CPU scheduling, launches and sampling that a
  faster GPU does not shorten, and 11 ms per further pipeline stage), all learned
  leave-one-deployment-out (docs/predictions.md); the rest is in the intervals,
  which say honestly how far such a prediction has missed on public data. The
  overhead is one figure for every engine and GPU: across request lengths it raised
  the per-user speed's median error (18% → 25%) while it lowered the throughput's.
  The per-stage figure is fitted on the only public pipelines, one publisher's PCIe
  GPUs at their maximum batch. Measure before buying.
- **Another precision or shape.** Kimi-K2.5 on B200, INT4 TP 8 ↔ NVFP4 TP 4, misses by
  37% and 48% at the median (59% at worst), inside intervals this wide only because
  the kind's other errors are: INT4 runs dequantizing kernels on
  BF16 tensor cores, NVFP4 native FP4 ones, and the shape changes too. Few public pairs
  change only the precision: most of this kind's predictions change only the shape, and
  most of those are one page's pipeline shapes (TensorRT-LLM's Llama-3.3-70B NVFP4 on
  RTX PRO 6000 at PP 1, 2, 4 and 8, offline maximum throughput), whose PP 8 is still
  predicted about 30% off at the median (60% at worst; 58% at the median before the
  per-stage overhead): the roofline models no pipeline bubble beyond it.
- **A model none of the fits saw (section 4).** On DeepSeek-R1-0528 on SGLang
  v0.5.9, scored on the targets drawn after another GPU was split in two, moves
  between NVIDIA's GPUs (H200 ↔ B200) missed by 8% at the median and another precision
  or shape by 9%, every interval holding; moves to, from or between AMD's GPUs missed
  by 26% and the interval held 73%, short of both goals (section 6's campaign-weighted
  interval, calibrated without the set, would have held 81%: no clean test, the method
  was chosen after the set was read; the median error is the model's and stays). The misses are the MI300X
  and MI325X targets, predicted about 60% too fast: that release reached 12–36% of
  their rooflines, against 19–60% on MI355X and 33–69% on H200. The release, not the
  GPU, looks to be the cause: MI300X on SGLang v0.5.12 (section 5's set) delivered
  1.13–1.64× (median 1.45×) the output tok/s of v0.5.9 at equal lengths and
  concurrency, and section 5 predicted that deployment 2% high at the median. MI325X
  has no other release to compare. Kimi-K2.5's INT4 rows on MI325X and MI300X were left
  out of the calibration for a like pattern (3–4× below every other deployment's
  prediction). A release that runs a GPU's kernels this far below their usual share
  is something no roofline can know: measure before buying.
- **The clean test, and what it says (section 7).** On InferenceX's December 2025
  and January 2026 sweeps, read after the model and the run-time intervals were
  committed: another precision or shape missed by 15% at the median, 96% covered;
  another GPU between NVIDIA's GPUs by 15.3%, 99% covered, just over its 15% goal;
  moves to, from or between AMD's GPUs by 48%, 55% covered, far from both goals.
  Within one engine run (one framework's run of one day, the what-if's own
  assumption) moves between NVIDIA's GPUs missed by 11% and moves involving AMD's
  by 12%, every interval holding; the misses are across engine releases, above all
  MI355X on that month's SGLang, which reached 6–27% of its roofline where later
  SGLang and ATOM releases delivered 2.2–3.7× as much at equal lengths and
  concurrency. MI300X and MI325X targets were predicted 1% and 4% high at the
  median, 81–82% covered. Another concurrency held 73%, short of 80%: its interval
  is narrow (×0.85–×1.18) and these sweeps' levels are less regular than the
  calibration's. The model carries across GPUs and vendors within one engine
  release; no roofline can know how mature another release's kernels are on a GPU.
- **Engine releases move the share (section 5).** InferenceX's other DeepSeek-R1-0528
  sweeps span a dozen engine releases over seven months. Predicted across them, another
  GPU between NVIDIA's GPUs missed by 23% at the median and the interval of section 2,
  calibrated mostly on one publisher's consistent tables, held fewer than half the points;
  the same GPU, precision and shape on another release held 44%, the share moving by 9–41%
  at the median from one release to another and up to 4.8× at a single level. Between deployments of one release, as a what-if
  assumes, moves between NVIDIA's GPUs missed by 11% at the median and that interval held
  90% (124 predictions, 8 deployments): the release, not the GPU, made most of the miss.
  Those errors now size the run-time intervals
  (section 6), which are wider for it. Deployments of one release err alike, so the
  intervals weigh each campaign (a publisher with one engine release) as one and are
  scored leaving whole campaigns out: 79.9–81% for these two kinds on errors they
  were not sized with (71–75% when one deployment was left out and its release
  stayed in the calibration). A what-if assumes the measured engine
  release: a prediction for another release is no better than these figures.
- **TTFT is barely predictable.** A predicted TTFT is the source's times the ratio of
  the rooflines' prefill times; public TTFTs at load are mostly scheduling and queueing,
  so it missed by 66–91% at the median across GPUs (section 2) and the throughput's
  interval, which whatif gave it until now, held 0–30% of them. TTFT now has its own
  interval per kind, as wide as those errors (section 6).
- **Most public figures are single points.** The InferenceX blog tables give one
  (best) configuration per GPU and length, with its concurrency and median TTFT and
  TPOT: the decode batch is taken from Little's law (concurrency × decode time ÷
  (TTFT + decode time)) and the GPU count from concurrency ÷ TPOT against the
  throughput per GPU. TensorRT-LLM's perf-overview gives offline maximum throughput
  with no concurrency: its batch is what the modelled KV cache holds (≤ 2,048 per
  engine), a modelling step that adds error of its own.
- **Errors are not independent.** Many predictions share a deployment, so the
  conformal guarantee (exchangeable errors) holds only roughly; the leave-one-
  deployment-out coverage above is the check of how roughly.
- **KV capacity.** A level beyond what the target's modelled KV cache holds is predicted
  at the batch the cache holds (requests beyond it queue).
- **Lengths.** The roofline counts attention FLOPs (quadratic in the prompt) and
  bounds the matmuls and attention each on its own, added (capacity/roofline.go):
  a step's prefill FLOPs no longer hide under its decode tokens' KV reads. Attention
  itself stays bound by the KV reads on every public point; what moved the long
  prompts was the KV read time added to compute-bound matmuls. Long prompts are
  still predicted high from short ones: gpt-oss-120b on B200 and GB200 from
  1,024/32,768 to 32,768/1,024 about 40–60% (75–84% before), Llama-3.3-70B from 8k
  to 32k prompts 20–33%; and the reverse low.
`

// writeDeploymentBounds adds the public deployments' points to section 1: each
// point's share of its roofline with prefill at its batch. A point above its bound
// fails the test (the catalog or the capacity model would be wrong).
func writeDeploymentBounds(t *testing.T, doc *strings.Builder, deps []*valDep) {
	t.Helper()
	doc.WriteString("Published points of the deployments scored below (batch: Little's law from the published concurrency, TTFT and TPOT; `max` where only offline maximum throughput is published, the batch the modelled KV cache holds):\n\n")
	doc.WriteString("| deployment | ISL/OSL | c | batch | measured out tok/s | roofline out tok/s | share |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, d := range deps {
		if d.source == "curve" {
			continue // in the table above
		}
		for _, p := range d.points {
			bound := d.roof.AtWorkload(p.batch, p.prompt, p.output).TotalTokS
			c := "max"
			if p.c > 0 {
				c = num(p.c)
			}
			fmt.Fprintf(doc, "| %s | %.0f/%.0f | %s | %.0f | %.0f | %.0f | %.0f%% |\n", d.id, p.prompt, p.output, c, p.batch, p.out, bound, p.out/bound*100)
			if p.out > bound {
				t.Errorf("%s %.0f/%.0f c=%s: measured %.0f tok/s above the roofline %.0f", d.id, p.prompt, p.output, c, p.out, bound)
			}
		}
	}
	doc.WriteString("\n")
}

// The portable part learned from the errors: the share of the roofline a GPU
// reaches differs by vendor (kernels, attention backends and engines of ROCm and
// CUDA), so a prediction from an NVIDIA GPU to an AMD one errs by about
// offset[nvidia] − offset[amd] in log. The offsets are fitted by ridge least squares
// (λ = 1, shrinking towards no offset) on the raw log errors; a scored prediction's
// offsets are fitted without its own two deployments. Finer factors were tried and
// not kept, each scored the same way (another GPU's held-out median error, raw
// 21.8%): per GPU 22.1%, per GPU and engine 22.8%, per architecture 20.0%, per
// vendor 18.0%.

func vendorOf(d *valDep) string { return d.roof.GPU.Vendor() }

// fitVendorOffsets fits the vendor offsets on the scores kept by keep.
func fitVendorOffsets(scores []valScore, keep func(valScore) bool) map[string]float64 {
	const lambda = 1.0
	index := map[string]int{}
	var names []string
	type row struct {
		a, b string
		y    float64
	}
	var rows []row
	for _, s := range scores {
		if !keep(s) {
			continue
		}
		r := row{vendorOf(s.from), vendorOf(s.to), math.Log(s.raw / s.measured)}
		if r.a == r.b {
			continue // no vendor crossed: nothing to learn
		}
		for _, v := range []string{r.a, r.b} {
			if _, ok := index[v]; !ok {
				index[v] = len(names)
				names = append(names, v)
			}
		}
		rows = append(rows, r)
	}
	n := len(names)
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][i] = lambda
	}
	for _, r := range rows {
		i, j := index[r.a], index[r.b]
		a[i][i]++
		a[j][j]++
		a[i][j]--
		a[j][i]--
		a[i][n] += r.y
		a[j][n] -= r.y
	}
	beta := solve(a)
	out := map[string]float64{}
	for i, v := range names {
		out[v] = beta[i]
	}
	return out
}

// solve solves the augmented system a (n × n+1, symmetric positive definite) by
// Gaussian elimination with partial pivoting.
func solve(a [][]float64) []float64 {
	n := len(a)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// Every source of anchors.csv is named in the README beside it, so no figure is
// without its provenance.
func TestValidationSourcesNamed(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("testdata", "validation", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"anchors.csv", "heldout-dsr1.csv", "testset2-dsr1.csv"} {
		for _, r := range readCSV(t, filepath.Join("testdata", "validation", file)) {
			if !strings.Contains(string(readme), "`"+r["source"]+"`") {
				t.Errorf("%s source %q is not named in testdata/validation/README.md", file, r["source"])
			}
		}
	}
}

// belowGoal writes a coverage under the 80% goal so that it reads as under it: to
// a tenth where the whole percent would round up to the goal (79.6% is not 80%).
func belowGoal(pct float64) string {
	if math.Round(pct) >= 80 {
		return fmt.Sprintf("%.1f%%", math.Floor(pct*10)/10)
	}
	return fmt.Sprintf("%.0f%%", pct)
}
