package analyze

import (
	"math"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// A batch of 1 moved from a slow GPU (L40S) to a fast one (H100) gains less than
// the rooflines' ratio: the fixed per-step overhead does not speed up. The
// prediction is the measured step less t0, scaled by the rooflines' steps, plus
// t0; with no overhead it is the plain share times the changed roofline.
func TestPredictCurveStepOverhead(t *testing.T) {
	l40s := curveRoofline(t, capacity.BudgetInput{GPU: "l40s", GPUs: 1})
	h100 := curveRoofline(t, capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1})
	o := prediction.StepOverhead()
	t0 := o.S(1)
	if t0 <= 0 {
		t.Fatalf("prediction.StepOverhead() = %+v: no fitted overhead to test", o)
	}
	const prompt, output = 1000.0, 500.0
	from := l40s.AtWorkload(1, prompt, output)
	to := h100.AtWorkload(1, prompt, output)
	measuredS := from.StepS / 0.7 // 70% of the L40S roofline at batch 1
	pts := []CurvePoint{{Level: 0, Concurrency: 1, Batch: 1, OutputTokS: 1 / measuredS, PerUserTokS: 1 / measuredS, TPOT: pf(measuredS), Valid: true}}
	m := CurveModel{Points: pts, Base: l40s, Changed: h100, PromptTokens: prompt, OutputTokens: output, ToPrompt: prompt, ToOutput: output}

	plain := PredictCurve(m)[0]
	ratio := pts[0].OutputTokS / from.TotalTokS * to.TotalTokS
	if plain.OutputTokS == nil || math.Abs(plain.OutputTokS.Value/ratio-1) > 1e-9 {
		t.Fatalf("no overhead: %+v, want the share × the changed roofline, %g", plain.OutputTokS, ratio)
	}

	m.StepOverhead = o
	got := PredictCurve(m)[0]
	wantStep := to.StepS*(measuredS-t0)/from.StepS + t0
	for _, f := range []struct {
		name      string
		got       *Range
		want, not float64
	}{
		{"output tok/s", got.OutputTokS, 1 / wantStep, ratio},
		{"per-user tok/s", got.PerUserTokS, 1 / wantStep, ratio},
		{"TPOT", got.TPOT, wantStep, 1 / ratio},
	} {
		if f.got == nil || math.Abs(f.got.Value/f.want-1) > 1e-9 {
			t.Errorf("%s with t0 = %g s: %+v, want %g", f.name, t0, f.got, f.want)
			continue
		}
		// The overhead's share of the predicted step: at least a tenth here.
		if math.Abs(f.got.Value/f.not-1) < 0.1 {
			t.Errorf("%s with t0 = %g s: %g, within 10%% of the rooflines' ratio %g", f.name, t0, f.got.Value, f.not)
		}
	}
	if got.OutputTokS.Value >= ratio {
		t.Errorf("output with t0: %g, want below the rooflines' ratio %g (a slow GPU's overhead does not speed up)", got.OutputTokS.Value, ratio)
	}
}

// A measured step shorter than the roofline's step plus its overhead scales both
// overheads down so the carried efficiency stays at most 1; a step under the
// roofline carries the plain ratio. The changed deployment's overhead (another
// pipeline depth) is the one added back.
func TestCarryStep(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		measured, from, to, fromO, toO float64
		want, wantEff                  float64
	}{
		{"overhead taken off and added back", 0.020, 0.010, 0.005, 0.004, 0.004, 0.005*0.016/0.010 + 0.004, 0.010 / 0.016},
		{"a deeper pipeline's overhead added back", 0.020, 0.010, 0.005, 0.004, 0.010, 0.005*0.016/0.010 + 0.010, 0.010 / 0.016},
		{"step shorter than roofline + overhead: scaled to 2 ms", 0.012, 0.010, 0.005, 0.004, 0.004, 0.005 + 0.002, 1},
		{"scaled by the same factor on both sides", 0.012, 0.010, 0.005, 0.004, 0.008, 0.005 + 0.004, 1},
		{"step under the roofline: the plain ratio", 0.008, 0.010, 0.005, 0.004, 0.004, 0.004, 0.010 / 0.008},
		{"no overhead: the plain ratio", 0.020, 0.010, 0.005, 0, 0, 0.010, 0.5},
		{"nothing measured", 0, 0.010, 0.005, 0.004, 0.004, 0, 0},
	} {
		if got := carryStep(tc.measured, tc.from, tc.to, tc.fromO, tc.toO); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: carryStep = %g, want %g", tc.name, got, tc.want)
		}
		if got := carriedEfficiency(tc.measured, tc.from, tc.fromO); math.Abs(got-tc.wantEff) > 1e-12 {
			t.Errorf("%s: carriedEfficiency = %g, want %g", tc.name, got, tc.wantEff)
		}
	}
}

// A curve moved onto a pipeline of 4 stages pays the overhead of 4 stages: the
// measured step less one stage's overhead, scaled by the rooflines' steps, plus
// the 4-stage overhead (o.S(4)), not the single step's.
func TestPredictCurveStageOverhead(t *testing.T) {
	one := curveRoofline(t, capacity.BudgetInput{GPU: "l40s", GPUs: 1})
	four := curveRoofline(t, capacity.BudgetInput{GPU: "l40s", GPUs: 4, PP: 4})
	if four.Shape.PP != 4 {
		t.Fatalf("roofline shape %+v, want PP 4", four.Shape)
	}
	o := prediction.Overhead{StepS: 0.004, ExtraStageS: 0.002}
	const prompt, output = 1000.0, 500.0
	from := one.AtWorkload(8, prompt, output)
	to := four.AtWorkload(8, prompt, output)
	measuredS := from.StepS / 0.6
	pts := []CurvePoint{{Level: 0, Concurrency: 8, Batch: 8, OutputTokS: 8 / measuredS, PerUserTokS: 1 / measuredS, Valid: true}}
	m := CurveModel{Points: pts, Base: one, Changed: four, PromptTokens: prompt, OutputTokens: output, ToPrompt: prompt, ToOutput: output, StepOverhead: o}
	got := PredictCurve(m)[0]
	wantStep := to.StepS*(measuredS-o.S(1))/from.StepS + o.S(4)
	if got.PerUserTokS == nil || math.Abs(got.PerUserTokS.Value*wantStep-1) > 1e-9 {
		t.Fatalf("per-user tok/s on 4 stages: %+v, want 1/%g (the 4-stage overhead %g s added back)", got.PerUserTokS, wantStep, o.S(4))
	}
	if got.OutputTokS == nil || math.Abs(got.OutputTokS.Value*wantStep/8-1) > 1e-9 {
		t.Errorf("output tok/s on 4 stages: %+v, want 8/%g", got.OutputTokS, wantStep)
	}
}
