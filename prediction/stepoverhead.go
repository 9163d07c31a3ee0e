package prediction

// Overhead is the fixed time of a decode step that does not scale with the GPU,
// in seconds. whatif takes it off a measured step before carrying the step's
// share of the roofline to another deployment, and adds the changed deployment's
// back to the predicted step, so a small batch on a fast GPU is not predicted to
// speed up by the whole roofline ratio.
//
// It has two parts because a token passes a pipeline's stages one after another
// (capacity.Roofline's step is PP stage steps): what the engine pays once per step
// (the CPU's scheduling, the sampling, a single forward's launches) and what each
// further stage adds (its own forward's launches and its wait for the previous
// stage's activations).
type Overhead struct {
	StepS       float64 // once per decode step
	ExtraStageS float64 // once per pipeline stage past the first
}

// S is the overhead of one decode step of a deployment with the given number of
// pipeline stages (fewer than 1 count as 1).
func (o Overhead) S(stages int) float64 {
	return o.StepS + float64(max(stages, 1)-1)*o.ExtraStageS
}

// StepOverhead is the overhead whatif uses: fitted with the FP4 compute share and
// the vendor offsets on the public errors and validated leave-one-deployment-out
// (docs/validation.md, docs/predictions.md); zero (no overhead) where none is
// fitted.
func StepOverhead() Overhead {
	o := stepOverheadTable()
	if o.StepS < 0 || o.ExtraStageS < 0 {
		return Overhead{}
	}
	return o
}
