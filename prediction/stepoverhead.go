package prediction

// StepOverheadS is the fixed time of a decode step that does not scale with the
// GPU, in seconds: the CPU's scheduling, the kernel launches and the sampling.
// whatif takes it off a measured step before carrying the step's share of the
// roofline to another deployment, and adds it back to the predicted step, so a
// small batch on a fast GPU is not predicted to speed up by the whole roofline
// ratio. Fitted with the FP4 compute share and the vendor offsets on the public
// errors and validated leave-one-deployment-out (docs/validation.md,
// docs/predictions.md); 0 (no overhead) where none is fitted.
func StepOverheadS() float64 {
	if t := stepOverheadTable(); t > 0 {
		return t
	}
	return 0
}
