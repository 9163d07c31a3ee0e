package prediction

// The terms of the roofline predictions carry a measured share of the roofline on
// (docs/predictions.md): the roofline the analysis reports is a bound, with the
// datasheet's peak FLOP/s and the smallest all-reduce latency, while the public
// measurements show the kernels reaching less. Both are fitted with the vendor
// offsets on the public errors and validated leave-one-deployment-out
// (docs/validation.md); the fitted values are data (calibration_table.go).

// ComputeShare is the share of a tensor-core dtype's peak FLOP/s that predictions
// count on, relative to the other dtypes' ("fp4", "fp8", "bf16" as
// capacity.Roofline.ComputeDtype names them): a deployment compute-bound on FP4
// tensor cores is not predicted to run at twice its FP8 speed. 1 for a dtype
// without a fitted share.
func ComputeShare(dtype string) float64 {
	if f, ok := computeShareTable()[dtype]; ok && f > 0 {
		return f
	}
	return 1
}

// AllReduceLatencyFactor multiplies the roofline's latency of one small
// all-reduce or all-to-all (capacity.AllReduceLatencyNVLink and PCIe, the
// nccl-tests order of magnitude the bound assumes) for predictions: a served
// decode step's collectives cost more than the bare transfer (launch,
// synchronisation, the straggler GPU). At least 1.
func AllReduceLatencyFactor() float64 {
	if f := allReduceLatencyFactor(); f > 1 {
		return f
	}
	return 1
}
