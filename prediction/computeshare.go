package prediction

// ComputeShare is the share of a tensor-core dtype's peak FLOP/s that predictions
// count on, relative to the other dtypes' ("fp4", "fp8", "bf16" as
// capacity.Roofline.ComputeDtype names them): whatif carries a measured share of
// the roofline to a roofline whose peak is scaled by it, so a deployment that is
// compute-bound on FP4 tensor cores is not predicted to run at twice its FP8 speed.
// The roofline itself, the bound, keeps the catalog's peak. Fitted with the vendor
// offsets on the public errors and validated leave-one-deployment-out
// (docs/validation.md, docs/predictions.md); 1 for a dtype without a fitted share.
func ComputeShare(dtype string) float64 {
	if f, ok := computeShareTable()[dtype]; ok && f > 0 {
		return f
	}
	return 1
}
