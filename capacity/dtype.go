package capacity

import (
	"fmt"
	"strings"
)

// NormalizeDtype maps the spellings of a dtype (torch_dtype, a KV or weight dtype) to
// "fp32", "bf16", "fp16" or "fp8".
func NormalizeDtype(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bf16", "bfloat16", "torch.bfloat16":
		return "bf16", nil
	case "fp16", "float16", "half", "torch.float16":
		return "fp16", nil
	case "fp32", "float32", "float", "torch.float32":
		return "fp32", nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3fn", "float8_e4m3fn", "float8", "int8":
		return "fp8", nil
	}
	return "", fmt.Errorf("unknown dtype %q (want auto, bf16, fp16, fp8 or fp32)", s)
}

func dtypeBytes(d string) int64 {
	switch d {
	case "fp32":
		return 4
	case "fp8":
		return 1
	}
	return 2
}
