package report

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// The power and energy panel of the Decision section: each level's mean power per
// GPU and energy per output token against concurrency, from the GPU exporters the
// recording scraped (record --gpu-metrics-url). Shown whenever a run has GPU
// telemetry, deployment declared or not.

// hasGPU reports whether any level of any run carries GPU figures.
func hasGPU(runs []analyze.Run) bool {
	for i := range runs {
		for _, l := range runs[i].Levels {
			if l.GPU != nil {
				return true
			}
		}
	}
	return false
}

// energyX is a level's position on the panel: its offered concurrency, or for a
// rate level the concurrency it measured in flight.
func energyX(l analyze.Level) float64 {
	if l.Concurrency > 0 {
		return float64(l.Concurrency)
	}
	return l.InFlight
}

// energyCharts draws W per GPU and J per output token against concurrency.
func energyCharts(b *chartBuilder, runs []analyze.Run, labels []string) []chartView {
	if !hasGPU(runs) {
		return nil
	}
	chart := func(id, yName, title, caption, unit string, get func(*analyze.GPUTelemetry) *float64) chartView {
		c := charts.NewLine()
		c.SetGlobalOptions(append(baseOpts(id),
			charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "Concurrency", NameLocation: "middle", NameGap: 30, Scale: opts.Bool(true)}),
			charts.WithYAxisOpts(yAxis(yName)))...)
		for i := range runs {
			var data []interface{}
			for _, l := range runs[i].Levels {
				if l.GPU == nil {
					continue
				}
				if v := get(l.GPU); v != nil && finite(*v) {
					data = append(data, []interface{}{roundSig(energyX(l), 4), roundSig(*v, 4)})
				}
			}
			c.MultiSeries = append(c.MultiSeries, lineSeries(seriesName(labels, i, "measured"), data, runColor(i), "solid", true))
		}
		return b.add(c, "", "", unit, title, caption, false, 320)
	}
	return []chartView{
		chart("power", "W per GPU", "GPU power per GPU",
			"Mean power of each GPU inside each level's steady-state window, averaged over the GPUs the exporters reported (DCGM_FI_DEV_POWER_USAGE or the AMD/Triton equivalent).",
			"W", func(g *analyze.GPUTelemetry) *float64 { return g.PowerPerGPUW }),
		chart("energy", "J per output token", "Energy per output token",
			"The GPUs' energy in the window (their energy counters, or mean power × window where a GPU has none) divided by the output tokens served in it: all GPUs, not per GPU. Facility overhead (PUE) is not included.",
			"J", func(g *analyze.GPUTelemetry) *float64 { return g.JPerOutputToken }),
	}
}

// energyLines are the Decision section's sentences on power and energy at the
// ceiling of one run; none without GPU telemetry there.
func energyLines(r *analyze.Run) []string {
	d := r.Decision
	if d == nil || d.AtCeiling == nil || d.AtCeiling.Energy == nil {
		return nil
	}
	e := d.AtCeiling.Energy
	s := fmt.Sprintf("Power at the ceiling (level %d):", d.AtCeiling.Level)
	if e.PowerPerGPUW != nil {
		s += fmt.Sprintf(" %.0f W per GPU", *e.PowerPerGPUW)
	}
	if e.JPerOutputToken != nil {
		s += fmt.Sprintf(", %.3g J per output token", *e.JPerOutputToken)
	}
	if e.JPerRequest != nil {
		s += fmt.Sprintf(", %.3g J per request", *e.JPerRequest)
	}
	lines := []string{s + "."}
	if e.EnergyCostPerMOutput != nil {
		l := fmt.Sprintf("Energy at the SLOs: $%.4f per million output tokens (PUE %.2f)", *e.EnergyCostPerMOutput, e.PUE)
		if e.EnergyShare != nil && d.AtCeiling.CostPerMOutput != nil {
			l += fmt.Sprintf(", beside $%.3f of GPU-hours: energy is %.0f%% of the two", *d.AtCeiling.CostPerMOutput, *e.EnergyShare*100)
		}
		lines = append(lines, l+".")
	}
	return lines
}
