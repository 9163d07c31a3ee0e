package analyze

import "fmt"

// The energy side of the decision: each level's GPU power and energy per token
// (from policy_energy.go) and, with a price of electricity, the energy cost per million
// output tokens beside the GPU-hour cost. Energy cost per million output tokens =
// J/token × 10^6 ÷ 3.6·10^6 J/kWh × PUE × USD/kWh. A rented GPU-hour usually
// includes its power; for owned hardware the GPU-hour price is the amortisation
// and the energy is paid on top: the share says how much of the sum energy is.

// jPerKWh is the joules in a kilowatt-hour.
const jPerKWh = 3.6e6

// levelEnergy is a level's energy in decision terms at outputTokS (the level's, or
// the goodput-scaled one at the ceiling) and gpuHourCost per million (nil = none).
func levelEnergy(g *GPUTelemetry, outputTokS float64, gpuCostPerM *float64, o DecisionOptions) *LevelEnergy {
	if g == nil {
		return nil
	}
	pue := o.PUE
	if pue <= 0 {
		pue = 1
	}
	e := &LevelEnergy{PowerPerGPUW: g.PowerPerGPUW, JPerOutputToken: g.JPerOutputToken, JPerRequest: g.JPerRequest, PUE: pue}
	if g.rateW > 0 && outputTokS > 0 && o.PowerCostKWh > 0 {
		// The energy rate over the tokens served at outputTokS.
		jPerTok := g.rateW / outputTokS
		c := jPerTok * 1e6 / jPerKWh * pue * o.PowerCostKWh
		e.EnergyCostPerMOutput = &c
		if gpuCostPerM != nil && *gpuCostPerM+c > 0 {
			e.EnergyShare = ptr(c / (*gpuCostPerM + c))
		}
	}
	return e
}

// energyDecision adds each level's energy, and the ceiling's, to r's decision.
func energyDecision(r *Run, opt Options) {
	d := r.Decision
	if d == nil {
		return
	}
	byLevel := map[int]*Level{}
	for i := range r.Levels {
		byLevel[r.Levels[i].Level] = &r.Levels[i]
	}
	for i := range d.Levels {
		ld := &d.Levels[i]
		if l := byLevel[ld.Level]; l != nil && l.GPU != nil {
			ld.Energy = levelEnergy(l.GPU, l.OutputTokS, ld.CostPerMOutput, opt.Decision)
		}
	}
	if a := d.AtCeiling; a != nil {
		if l := byLevel[a.Level]; l != nil && l.GPU != nil {
			a.Energy = levelEnergy(l.GPU, a.OutputTokS, a.CostPerMOutput, opt.Decision)
			if l.GPU.GPUs != d.GPUs {
				d.Notes = append(d.Notes, fmt.Sprintf("the GPU exporters reported %d GPUs, the deployment counts %d (--gpus): the energy is that of the %d reported, the GPU-hour cost that of %d",
					l.GPU.GPUs, d.GPUs, l.GPU.GPUs, d.GPUs))
			}
		}
	}
}
