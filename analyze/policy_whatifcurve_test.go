package analyze

import (
	"math"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

func curveRoofline(t *testing.T, in capacity.BudgetInput) *capacity.Roofline {
	t.Helper()
	c, err := capacity.LoadModelConfig("../samples/models/llama-3.1-8b.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := capacity.PlanBudget(c, in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capacity.NewRoofline(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The whole-curve what-if: the same deployment unchanged predicts each valid level
// exactly (share × the same roofline), inside its interval; an invalid level, a
// level beyond the changed KV cache and a queueing TTFT are marked, not numbers; a
// longer prompt lowers every prediction.
func TestPredictCurve(t *testing.T) {
	h100 := curveRoofline(t, capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1})
	pts := []CurvePoint{
		{Level: 0, Concurrency: 1, Batch: 1, OutputTokS: 94, PerUserTokS: 95, TTFT: pf(0.055), TPOT: pf(0.0105), Valid: true},
		{Level: 1, Concurrency: 8, Batch: 7.6, OutputTokS: 646, PerUserTokS: 85, TTFT: pf(0.065), TPOT: pf(0.0118), Valid: true},
		{Level: 2, Concurrency: 32, Batch: 25.9, OutputTokS: 1578, PerUserTokS: 59, TTFT: pf(0.5), TPOT: pf(0.0169), Valid: true},
		{Level: 3, Concurrency: 64, Batch: 43.7, OutputTokS: 2203, PerUserTokS: 48, Valid: false},
		{Level: 4, Concurrency: 128, Batch: 60, OutputTokS: 2566, PerUserTokS: 41, Valid: true},
	}
	same := PredictCurve(CurveModel{Points: pts, Base: h100, Changed: h100, PromptTokens: 938, OutputTokens: 512, ToPrompt: 938, ToOutput: 512, KVHolds: 100})
	for i, l := range same {
		switch i {
		case 3:
			if l.OutputTokS != nil || !strings.Contains(l.Beyond, "invalid") {
				t.Errorf("invalid level: %+v", l)
			}
		case 4:
			if l.OutputTokS != nil || !strings.Contains(l.Beyond, "KV cache holds ~100") {
				t.Errorf("c=128 beyond the KV cache: %+v", l)
			}
		default:
			o := l.OutputTokS
			if o == nil || o.Value < pts[i].OutputTokS*0.999999 || o.Value > pts[i].OutputTokS*1.000001 || o.Low > o.Value || o.High < o.Value {
				t.Errorf("c=%g unchanged: %+v; want %g inside its interval", l.Concurrency, o, pts[i].OutputTokS)
			}
		}
	}
	if l := same[2]; l.TTFT != nil || !strings.Contains(l.TTFTBeyond, "mostly queueing") {
		t.Errorf("c=32 TTFT 500 ms against 55 ms unloaded: %+v %q", l.TTFT, l.TTFTBeyond)
	}
	if l := same[1]; l.TTFT == nil || l.TTFT.Value != 0.065 {
		t.Errorf("c=8 TTFT: %+v", l.TTFT)
	}
	long := PredictCurve(CurveModel{Points: pts, Base: h100, Changed: h100, PromptTokens: 938, OutputTokens: 512, ToPrompt: 8000, ToOutput: 512, KVHolds: 100})
	for i := range []int{0, 1, 2} {
		if l := long[i]; l.OutputTokS == nil || l.OutputTokS.Value >= pts[i].OutputTokS || l.PerUserTokS.Value >= pts[i].PerUserTokS {
			t.Errorf("c=%g at 8000-token prompts: %+v, per user %+v; want below the measured %g, %g", l.Concurrency, l.OutputTokS, l.PerUserTokS, pts[i].OutputTokS, pts[i].PerUserTokS)
		}
	}
	// TTFT scales with the prefill time, attention's P² included: more than the
	// prompt's 8000/938 (its matmuls alone).
	want := 0.065 * h100.PrefillS(8000) / h100.PrefillS(938)
	if l := long[1]; l.TTFT == nil || math.Abs(l.TTFT.Value/want-1) > 1e-9 || l.TTFT.Value <= 0.065*8000/938*1.01 {
		t.Errorf("c=8 TTFT at 8000-token prompts: %+v; want %g, above the linear %g", l.TTFT, want, 0.065*8000/938)
	}
	// TTFT's interval: its own calibration where the kind has one, else the
	// throughput's inverted.
	thr := prediction.Calibration{Kind: prediction.ChangeGPU, LogHalfWidth: 0.3}
	own := thr
	own.TTFT = &prediction.Calibration{Kind: prediction.ChangeGPU, LogHalfWidth: 1.5}
	for _, c := range []struct {
		cal    prediction.Calibration
		lo, hi float64 // relative to the value
	}{{thr, math.Exp(-0.3), math.Exp(0.3)}, {own, math.Exp(-1.5), math.Exp(1.5)}} {
		l := PredictCurve(CurveModel{Points: pts, Base: h100, Changed: h100, PromptTokens: 938, OutputTokens: 512, ToPrompt: 938, ToOutput: 512, KVHolds: 100, Interval: c.cal})[1]
		if l.TTFT == nil || math.Abs(l.TTFT.Low/l.TTFT.Value-c.lo) > 1e-9 || math.Abs(l.TTFT.High/l.TTFT.Value-c.hi) > 1e-9 {
			t.Errorf("TTFT interval with %+v: %+v; want ×%.3f–×%.3f", c.cal.TTFT, l.TTFT, c.lo, c.hi)
		}
	}
}

// The intervals are the calibrated ones of the kind of change: [v·e^−q, v·e^q] with
// q from prediction's table, so another GPU's interval is the GPU kind's, and a
// what-if names the widest kind it crosses.
func TestPredictCurveCalibratedInterval(t *testing.T) {
	h100 := curveRoofline(t, capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1})
	h200 := curveRoofline(t, capacity.BudgetInput{GPU: "h200", GPUs: 1})
	pts := []CurvePoint{{Level: 0, Concurrency: 8, Batch: 7.6, OutputTokS: 646, PerUserTokS: 85, Valid: true}}
	for _, kind := range prediction.ChangeKinds() {
		cal := prediction.IntervalFor(kind)
		if cal.Kind != kind || cal.Nominal != prediction.NominalCoverage || cal.LogHalfWidth <= 0 {
			t.Fatalf("%s: stored calibration %+v", kind, cal)
		}
		l := PredictCurve(CurveModel{Points: pts, Base: h100, Changed: h200, PromptTokens: 938, OutputTokens: 512, ToPrompt: 938, ToOutput: 512, Interval: cal})[0]
		lo, hi := cal.Bounds(l.OutputTokS.Value)
		if l.OutputTokS.Low != lo || l.OutputTokS.High != hi {
			t.Errorf("%s: interval %+v, want [%g, %g]", kind, l.OutputTokS, lo, hi)
		}
		if cal.PerUser == nil && cal.Errors > 0 {
			t.Fatalf("%s: calibrated on %d errors but no per-user calibration", kind, cal.Errors)
		}
		ulo, uhi := cal.User().Bounds(l.PerUserTokS.Value)
		if l.PerUserTokS.Low != ulo || l.PerUserTokS.High != uhi {
			t.Errorf("%s: per-user interval %+v, want its own calibration's [%g, %g]", kind, l.PerUserTokS, ulo, uhi)
		}
	}
	for _, c := range []struct {
		change WhatIfChange
		from   string // the measured GPU
		want   prediction.ChangeKind
	}{
		{WhatIfChange{GPU: "h200", PromptTokens: 4000}, "h100-sxm", prediction.IntervalFor(prediction.ChangeGPU, prediction.ChangeLengths).Kind},
		{WhatIfChange{GPU: "h200"}, "h100-sxm", prediction.ChangeGPU},
		{WhatIfChange{GPU: "mi355x"}, "h100-sxm", prediction.ChangeGPUAMD},
		{WhatIfChange{GPU: "b200"}, "mi300x", prediction.ChangeGPUAMD},
		{WhatIfChange{GPU: "mi325x"}, "mi300x", prediction.ChangeGPUAMD},
		{WhatIfChange{GPU: "b200"}, "no-such-gpu", prediction.ChangeGPUAMD}, // unknown: the wider kind
		{WhatIfChange{KVDtype: "fp8"}, "h100-sxm", prediction.ChangePrecision},
		{WhatIfChange{TP: 2}, "h100-sxm", prediction.ChangePrecision},
		{WhatIfChange{OutputTokens: 100}, "h100-sxm", prediction.ChangeLengths},
		{WhatIfChange{MaxModelLen: 4096}, "h100-sxm", prediction.ChangeConcurrency},
	} {
		if got := prediction.IntervalFor(c.change.Kinds(c.from)...).Kind; got != c.want {
			t.Errorf("%+v from %s: interval of %s, want %s", c.change, c.from, got, c.want)
		}
	}
}

// Another vendor's GPU: the carried share is multiplied by the vendor efficiency
// from the calibration (AMD's GPUs reach less of their roofline than NVIDIA's on the
// public data), and an NVIDIA → NVIDIA change is not.
func TestPredictCurveVendorEfficiency(t *testing.T) {
	h100 := curveRoofline(t, capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1})
	mi300 := curveRoofline(t, capacity.BudgetInput{GPU: "mi300x", GPUs: 1})
	pts := []CurvePoint{{Level: 0, Concurrency: 8, Batch: 7.6, OutputTokS: 646, PerUserTokS: 85, Valid: true}}
	eff := prediction.VendorEfficiency(h100.GPU.Vendor(), mi300.GPU.Vendor())
	if eff >= 1 || eff <= 0.3 || prediction.VendorEfficiency("nvidia", "nvidia") != 1 {
		t.Fatalf("vendor efficiency NVIDIA → AMD %g, NVIDIA → NVIDIA %g", eff, prediction.VendorEfficiency("nvidia", "nvidia"))
	}
	m := CurveModel{Points: pts, Base: h100, Changed: mi300, PromptTokens: 938, OutputTokens: 512, ToPrompt: 938, ToOutput: 512}
	plain := PredictCurve(m)[0]
	m.Efficiency = eff
	crossed := PredictCurve(m)[0]
	if r := crossed.OutputTokS.Value / plain.OutputTokS.Value; r < eff*0.999999 || r > eff*1.000001 {
		t.Errorf("NVIDIA → AMD prediction ratio %g, want the vendor efficiency %g", r, eff)
	}
	if r := crossed.PerUserTokS.Value / plain.PerUserTokS.Value; r < eff*0.999999 || r > eff*1.000001 {
		t.Errorf("per-user ratio %g, want %g", r, eff)
	}
}
