package compare

import (
	"fmt"
	"math"
	"strings"
)

// isSeconds reports whether a metric is a latency in seconds (shown in ms).
func isSeconds(metric string) bool {
	return strings.HasSuffix(metric, "_s") && strings.Contains(metric, "_p")
}

// valueText shows one side's value of a metric.
func valueText(metric string, v *float64) string {
	switch {
	case v == nil && metric == "ceiling":
		return "none"
	case v == nil:
		return "—"
	case metric == "ceiling":
		return fmt.Sprintf("%g", *v)
	case metric == "error_rate":
		return fmt.Sprintf("%.1f%%", 100**v)
	case isSeconds(metric):
		return fmt.Sprintf("%.1f ms", 1000**v)
	case *v >= 100:
		return fmt.Sprintf("%.0f", *v)
	default:
		return fmt.Sprintf("%.3g", *v)
	}
}

// percent is a signed percentage, "+33%", "−9.9%".
func percent(x float64) string {
	s := fmt.Sprintf("%+.1f%%", 100*x)
	if math.Abs(x) >= 0.1 {
		s = fmt.Sprintf("%+.0f%%", 100*x)
	}
	return strings.Replace(s, "-", "−", 1)
}

// signedText is a change as shown: percent for ratios, points for the error rate.
func signedText(metric string, x float64) string {
	if metric == "error_rate" {
		return strings.Replace(fmt.Sprintf("%+.1f pts", 100*x), "-", "−", 1)
	}
	return percent(x)
}

// changeText is the change of d, "" when unknown.
func changeText(d *MetricDiff) string {
	if d.Change == nil {
		return ""
	}
	return signedText(d.Metric, *d.Change)
}

// pText shows a p-value.
func pText(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.2g", p)
}
