package analyze

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/prediction"
)

// The predicting roofline scales only an FP4 roofline's peak, on a copy: the
// bound the analysis reports keeps the catalog's peak.
func TestPredictingRoofline(t *testing.T) {
	for _, tc := range []struct {
		weights string
		scaled  bool
	}{{"fp4", true}, {"fp8", false}, {"", false}} {
		r := curveRoofline(t, capacity.BudgetInput{GPU: "b200", GPUs: 1, WeightDtype: tc.weights})
		peak := r.PeakFLOPs
		p := predictingRoofline(r, prediction.ComputeShare)
		if r.PeakFLOPs != peak {
			t.Errorf("%q: the bound's peak changed to %g", tc.weights, r.PeakFLOPs)
		}
		want := peak
		if tc.scaled {
			want = peak * prediction.ComputeShare("fp4")
		}
		if p.PeakFLOPs != want || (tc.scaled && p.PeakFLOPs >= peak) {
			t.Errorf("%q (%s): predicting peak %g, want %g", tc.weights, r.ComputeDtype, p.PeakFLOPs, want)
		}
	}
	if predictingRoofline(nil, prediction.ComputeShare) != nil {
		t.Error("a missing roofline must stay missing")
	}
}

// whatif onto FP4 tensor cores at a compute-bound workload (long prompts, whose
// prefill the roofline folds into each step) carries the measured share to the
// roofline at the FP4 compute share, not at the whole FP4 peak, as the validation
// scores it. The prompt is 8k, not longer: a longer prompt's attention, which runs
// on the BF16 tensor cores whatever the weights, would outweigh the FP4 matmuls.
func TestWhatIfFP4ComputeShare(t *testing.T) {
	dir := t.TempDir()
	p := knownProcess{workers: 4, perWorker: 10, tokens: 8}
	tr := writeTrace(t, dir, "a.parquet", knownProcessInfo(p.workers), p.rows(1))
	opt := Options{ModelConfig: filepath.Join("..", "samples", "models", "llama-3.1-8b.json"), BudgetInput: capacity.BudgetInput{GPU: "h100-sxm", GPUs: 1}, TimelineLevel: -1, Resamples: -1}
	a, err := Analyze(context.Background(), []string{tr}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := opt.Prepare(); err != nil {
		t.Fatal(err)
	}
	change := WhatIfChange{GPU: "b200", WeightDtype: "fp4", PromptTokens: 8192, OutputTokens: 16}
	res, err := WhatIf(&a.Runs[0], opt, change)
	if err != nil {
		t.Fatal(err)
	}
	full := curveRoofline(t, capacity.BudgetInput{GPU: "b200", GPUs: 1, WeightDtype: "fp4"})
	scaled := predictingRoofline(full, prediction.ComputeShare)
	n := 0
	for _, lp := range res.Levels {
		if lp.OutputTokS == nil || lp.Measured.Share <= 0 {
			continue
		}
		n++
		atShare := scaled.AtWorkload(lp.Batch, change.PromptTokens, change.OutputTokens)
		atPeak := full.AtWorkload(lp.Batch, change.PromptTokens, change.OutputTokens)
		if atPeak.TotalTokS < atShare.TotalTokS*1.2 {
			t.Fatalf("level %d: not compute-bound (roofline %g at the peak, %g at the share): the test shows nothing", lp.Level, atPeak.TotalTokS, atShare.TotalTokS)
		}
		// The measured step (batch ÷ output) and its roofline's (the share of it),
		// carried with the step overhead (carryStep) to the changed roofline.
		measuredS := lp.Batch / lp.Measured.OutputTokS
		carried := func(to capacity.RooflinePoint) float64 {
			return lp.Batch / carryStep(measuredS, measuredS*lp.Measured.Share, to.StepS, prediction.StepOverhead().S(1), prediction.StepOverhead().S(1))
		}
		if want := carried(atShare); math.Abs(lp.OutputTokS.Value/want-1) > 1e-9 {
			t.Errorf("level %d: predicted %g tok/s, want the share %g carried to the roofline at the FP4 compute share: %g (at the whole peak: %g)",
				lp.Level, lp.OutputTokS.Value, lp.Measured.Share, want, carried(atPeak))
		}
	}
	if n == 0 {
		t.Fatal("no level predicted")
	}
	// The ceiling row says the changed roofline's FP4 tensor cores were counted at
	// the share, so the figure is not mistaken for a share of the bound.
	said := false
	for _, row := range res.Rows {
		if row.Predicted && row.OutputTokS != nil {
			said = strings.Contains(row.Basis, fmt.Sprintf("changed roofline's FP4 tensor cores at %.2f of their peak FLOP/s", prediction.ComputeShare("fp4")))
			if !said {
				t.Errorf("the ceiling's basis does not name the FP4 compute share: %s", row.Basis)
			}
			if t0 := fmt.Sprintf("a fixed %.1f ms per step", prediction.StepOverhead().StepS*1000); !strings.Contains(row.Basis, t0) {
				t.Errorf("the ceiling's basis does not name the step overhead (%q): %s", t0, row.Basis)
			}
		}
	}
	if !said && !t.Failed() {
		t.Error("no predicted ceiling row with a throughput")
	}
}
