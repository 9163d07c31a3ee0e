package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
)

// GPU power and energy: `ceiling record --gpu-metrics-url` scrapes GPU exporters
// into the metrics sidecar beside the server's own metrics, every sample labelled
// with the exporter it came from (ceiling_gpu_source). Each level gets, inside its
// steady-state window, the mean power of every GPU, the energy the GPUs used, and
// from these the energy per output token and per request.
//
// The series, per exporter:
//   - NVIDIA DCGM exporter: DCGM_FI_DEV_POWER_USAGE (W, a gauge),
//     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since the driver loaded, a counter),
//     DCGM_FI_DEV_GPU_UTIL (%), DCGM_FI_PROF_SM_ACTIVE (a fraction),
//     DCGM_FI_DEV_FB_USED (MiB), DCGM_FI_DEV_SM_CLOCK (MHz); a GPU is named by its
//     UUID label, else gpu.
//   - AMD device-metrics-exporter: gpu_package_power or gpu_power_usage (W),
//     gpu_energy_consumed (µJ, a counter), gpu_gfx_activity (%); a GPU is gpu_id.
//   - Triton's own GPU metrics: nv_gpu_power_usage (W), nv_energy_consumption (J, a
//     counter since Triton started), nv_gpu_utilization (a fraction),
//     nv_gpu_memory_used_bytes; a GPU is gpu_uuid.
//
// Energy comes from the counter when a GPU has one with two scrapes in the window
// (a counter that goes down restarted from zero: the increase after it is its new
// value, as Prometheus' increase() counts it), scaled from the scrapes' span to the
// window; otherwise from the mean power × the window.

// gpuSample is one scraped GPU series value.
type gpuSample struct {
	ts     int64
	name   string
	labels string
	value  float64
	key    string // gpuKey(labels), once attachGPU has worked it out; "" before
}

// gpuField is what a GPU series measures, and its scale to ceiling's unit.
type gpuField struct {
	kind  string // power, energy, util, smactive, mem, clock
	scale float64
}

// gpuFields maps exporter series names to fields.
var gpuFields = map[string]gpuField{
	"DCGM_FI_DEV_POWER_USAGE":              {"power", 1},
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {"energy", 1e-3},
	"DCGM_FI_DEV_GPU_UTIL":                 {"util", 1},
	"DCGM_FI_PROF_SM_ACTIVE":               {"smactive", 100},
	"DCGM_FI_DEV_FB_USED":                  {"mem", 1},
	"DCGM_FI_DEV_SM_CLOCK":                 {"clock", 1},
	"gpu_package_power":                    {"power", 1},
	"gpu_power_usage":                      {"power", 1},
	"gpu_energy_consumed":                  {"energy", 1e-6},
	"gpu_gfx_activity":                     {"util", 1},
	"nv_gpu_power_usage":                   {"power", 1},
	"nv_energy_consumption":                {"energy", 1},
	"nv_gpu_utilization":                   {"util", 100},
	"nv_gpu_memory_used_bytes":             {"mem", 1.0 / (1 << 20)},
}

// isGPUMetric says whether a sidecar series is GPU telemetry.
func isGPUMetric(name string) bool {
	_, ok := gpuFields[name]
	return ok
}

// gpuKey names the GPU a sample is about: the exporter it came from and the
// GPU's UUID (or index).
func gpuKey(labels string) string {
	m := parseLabelText(labels)
	id := ""
	for _, k := range []string{"UUID", "gpu_uuid", "uuid", "gpu", "gpu_id", "card_series"} {
		if v := m[k]; v != "" {
			id = k + "=" + v
			break
		}
	}
	return m["ceiling_gpu_source"] + "|" + m["Hostname"] + m["hostname"] + "|" + id
}

// gpuSeries is one GPU's values of one field (scaled to ceiling's unit), in time
// order.
type gpuSeries []metricPoint

// levelGPU maps the GPU samples inside [ws, we] to the level's figures; nil when no
// GPU power or energy was scraped inside the window.
func levelGPU(samples []gpuSample, ws, we int64, windowS, outputTokS, requestS float64) *GPUTelemetry {
	by := map[string]map[string]gpuSeries{} // gpu -> kind -> samples
	for _, s := range samples {
		if s.ts < ws || s.ts > we || math.IsNaN(s.value) || math.IsInf(s.value, 0) {
			continue
		}
		f := gpuFields[s.name]
		k := s.key
		if k == "" {
			k = gpuKey(s.labels)
		}
		if by[k] == nil {
			by[k] = map[string]gpuSeries{}
		}
		by[k][f.kind] = append(by[k][f.kind], metricPoint{ts: s.ts, value: s.value * f.scale})
	}
	keys := make([]string, 0, len(by))
	for k, fs := range by {
		if len(fs["power"]) > 0 || len(fs["energy"]) > 1 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	g := &GPUTelemetry{GPUs: len(keys)}
	var powerSum, energySum float64
	powerGPUs, counterGPUs := 0, 0
	means := map[string][]float64{}
	for _, k := range keys {
		fs := by[k]
		for kind, ss := range fs {
			sort.Slice(ss, func(i, j int) bool { return ss[i].ts < ss[j].ts })
			g.Scrapes = max(g.Scrapes, len(ss))
			if kind != "energy" {
				means[kind] = append(means[kind], meanValue(ss))
			}
		}
		p, hasP := 0.0, len(fs["power"]) > 0
		if hasP {
			p = meanValue(fs["power"])
		}
		e, secs, resets, hasE := counterIncrease(fs["energy"])
		g.CounterResets += resets
		if hasE && secs > 0 {
			counterGPUs++
			energySum += e / secs * windowS
			if !hasP {
				p, hasP = e/secs, true // the counter's mean power
			}
		} else if hasP {
			energySum += p * windowS
		}
		if hasP {
			powerGPUs++
			powerSum += p
		}
	}
	if powerGPUs > 0 {
		g.TotalPowerW = ptr(powerSum)
		g.PowerPerGPUW = ptr(powerSum / float64(powerGPUs))
	}
	switch {
	case counterGPUs == len(keys):
		g.EnergySource = "energy counter"
	case counterGPUs > 0:
		g.EnergySource = fmt.Sprintf("energy counter on %d of %d GPUs, mean power × window on the rest", counterGPUs, len(keys))
	default:
		g.EnergySource = "mean power × window"
	}
	if windowS > 0 {
		g.EnergyJ = ptr(energySum)
		rate := energySum / windowS
		g.rateW = rate
		if outputTokS > 0 {
			g.JPerOutputToken = ptr(rate / outputTokS)
		}
		if requestS > 0 {
			g.JPerRequest = ptr(rate / requestS)
		}
	}
	avg := func(kind string) *float64 {
		v := means[kind]
		if len(v) == 0 {
			return nil
		}
		s := 0.0
		for _, x := range v {
			s += x
		}
		return ptr(s / float64(len(v)))
	}
	g.UtilPct, g.SMActivePct, g.SMClockMHz = avg("util"), avg("smactive"), avg("clock")
	if v := means["mem"]; len(v) > 0 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		g.MemUsedMiB = ptr(s)
	}
	return g
}

func meanValue(ss gpuSeries) float64 {
	s := 0.0
	for _, x := range ss {
		s += x.value
	}
	return s / float64(len(ss))
}

// counterIncrease is a counter's increase over its samples and the seconds they
// span; a decrease is a restart from zero (the new value is the increase since).
func counterIncrease(ss gpuSeries) (inc, secs float64, resets int, ok bool) {
	if len(ss) < 2 {
		return 0, 0, 0, false
	}
	for i := 1; i < len(ss); i++ {
		d := ss[i].value - ss[i-1].value
		if d < 0 {
			resets++
			d = ss[i].value
		}
		inc += d
	}
	return inc, float64(ss[len(ss)-1].ts-ss[0].ts) / 1e9, resets, true
}

// attachGPU gives each level of r its GPU figures, and the run a warning when GPU
// telemetry was recorded but some levels have none.
func attachGPU(r *Run, samples []gpuSample) {
	if len(samples) == 0 {
		var srv struct {
			GPUMetricsURLs []string `json:"gpu_metrics_urls"`
		}
		if len(r.Server) > 0 && json.Unmarshal(r.Server, &srv) == nil && len(srv.GPUMetricsURLs) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("GPU telemetry: %d exporters were given (--gpu-metrics-url) but the metrics sidecar holds no GPU power or energy sample: no power figures", len(srv.GPUMetricsURLs)))
		}
		return
	}
	samples, ws := keyGPUSamples(samples)
	r.Warnings = append(r.Warnings, ws...)
	missing := 0
	resets := 0
	for i := range r.Levels {
		l := &r.Levels[i]
		if l.winEndNs <= l.winStartNs {
			continue
		}
		l.GPU = levelGPU(samples, l.winStartNs, l.winEndNs, l.WindowS, l.OutputTokS, l.RequestS)
		if l.GPU == nil {
			missing++
		} else {
			resets += l.GPU.CounterResets
		}
	}
	if missing > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("GPU telemetry: %d of %d levels have no GPU power or energy scrape inside their window (the exporter's scrape interval is longer than the window, or it failed)", missing, len(r.Levels)))
	}
	if resets > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("GPU telemetry: an energy counter went down %d times inside level windows (a driver reload or GPU reset): counted as a restart from zero", resets))
	}
}

// maxGPUs bounds the GPUs telemetry is kept for: 512 nodes of 8. An exporter page
// that invents a GPU a line (an endless or hostile page) would otherwise make a
// "GPU" of every sample.
const maxGPUs = 4096

// keyGPUSamples works out each sample's GPU (gpuKey) once per label text, not once
// per sample and level (a map per sample: 1.4 GB for a million samples), and keeps
// the samples of the first maxGPUs GPUs, with a warning when there were more.
func keyGPUSamples(samples []gpuSample) ([]gpuSample, []string) {
	keyOf := map[string]string{} // at most maxMetricStrings label texts
	gpus := map[string]bool{}
	kept, dropped := samples[:0], 0
	for _, s := range samples {
		k, ok := keyOf[s.labels]
		if !ok {
			k = gpuKey(s.labels)
			if len(keyOf) < maxMetricStrings {
				keyOf[s.labels] = k
			}
		}
		if !gpus[k] {
			if len(gpus) >= maxGPUs {
				dropped++
				continue
			}
			gpus[k] = true
		}
		s.key = k
		kept = append(kept, s)
	}
	if dropped > 0 {
		return kept, []string{fmt.Sprintf("GPU telemetry: the exporters named more than %d GPUs; the %d samples of the GPUs beyond them are left out (an exporter page that names a new GPU on every line is not a node's)", maxGPUs, dropped)}
	}
	return kept, nil
}

// runGPUSamples collects the GPU samples of the sidecars that belong to run id (a
// sidecar naming another run is an earlier recording's, see attachMetrics).
func runGPUSamples(files []sidecarPoints, id string) []gpuSample {
	var out [][]gpuSample
	for _, f := range files {
		if f.runID != "" && id != "" && f.runID != id {
			continue
		}
		out = append(out, f.gpu)
	}
	if len(out) == 1 {
		return out[0] // one file: its samples, not a copy of them
	}
	return slices.Concat(out...)
}
