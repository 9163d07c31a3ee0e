package record

import (
	"context"
	"fmt"
	"time"

	"github.com/ceiling-llm/ceiling/trace"
)

// gpuPowerSeries are the series the analysis reads power or energy from
// (analyze/policy_energy.go holds the full mapping): an exporter serving none of them
// gives no power figures, which the user should hear before the sweep, not after.
var gpuPowerSeries = map[string]bool{
	"DCGM_FI_DEV_POWER_USAGE": true, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": true,
	"gpu_package_power": true, "gpu_power_usage": true, "gpu_energy_consumed": true,
	"nv_gpu_power_usage": true, "nv_energy_consumption": true,
}

// checkGPUExporters scrapes each GPU exporter once before the sweep and warns about
// one that does not answer or serves no power or energy series. A telemetry
// problem never stops a recording: the requests are what the run is for.
func (r *recorder) checkGPUExporters(ctx context.Context) {
	for _, u := range r.opts.GPUMetricsURLs {
		source := gpuSourceLabel(u)
		samples, note, err := scrape(ctx, r.client, u, time.Now().UnixNano())
		if note != "" {
			r.noteMetrics("GPU exporter "+source, note)
		}
		if err != nil {
			r.warn(fmt.Sprintf("GPU exporter %s did not answer (%v): no power or energy from it unless it recovers", source, err))
			continue
		}
		if !hasGPUPower(samples) {
			r.warn(fmt.Sprintf("GPU exporter %s answered with %d series but none of the power or energy series ceiling reads (DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, AMD gpu_power_usage/gpu_energy_consumed, Triton nv_gpu_power_usage/nv_energy_consumption): no power figures from it", source, len(samples)))
		}
	}
}

func hasGPUPower(samples []trace.MetricSample) bool {
	for _, s := range samples {
		if gpuPowerSeries[s.Name] {
			return true
		}
	}
	return false
}
