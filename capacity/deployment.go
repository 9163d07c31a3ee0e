package capacity

import "fmt"

// Deployment is the declared deployment of one analysis or plan, computed once: the
// model's config (parsed once), the shape, the memory budget and KV capacity, the
// KV model and the roofline. Every consumer (plan, analyze, whatif) takes this
// value instead of reading config.json and planning the budget again. A part the
// inputs do not give is nil, with the reason beside it.
type Deployment struct {
	// Input is the hardware side as given; Shape is its layout.
	Input BudgetInput
	Shape Shape
	// Config is the model's config.json (nil without one).
	Config *ModelConfig
	// Plan is the memory budget and KV capacity; nil without a config or without
	// hardware (a GPU or its memory). PlanErr is PlanBudget's error: with a Plan it
	// says the weights leave no KV budget, without one the inputs are wrong.
	Plan    *PlanResult
	PlanErr error
	// KV is the KV model: the plan's, or from the config, TP, PP and KV dtype alone.
	KV    *KVModel
	KVErr error
	// Roofline is the upper bound of the hardware (nil without a catalog GPU);
	// RooflineErr says why there is none.
	Roofline    *Roofline
	RooflineErr error
}

// NewDeployment computes the deployment from a config.json path ("" = none) and the
// hardware. It fails only when the config cannot be read; everything the inputs
// cannot give is left nil with its error.
func NewDeployment(configPath string, in BudgetInput) (*Deployment, error) {
	var cfg *ModelConfig
	if configPath != "" {
		var err error
		if cfg, err = LoadModelConfig(configPath); err != nil {
			return nil, err
		}
	}
	return DeploymentOf(cfg, in), nil
}

// DeploymentOf computes the deployment of a parsed config (nil = none).
func DeploymentOf(cfg *ModelConfig, in BudgetInput) *Deployment {
	d := &Deployment{Input: in, Shape: in.Shape(), Config: cfg}
	if cfg == nil {
		d.PlanErr = fmt.Errorf("no model config")
		d.KVErr = d.PlanErr
		d.RooflineErr = d.PlanErr
		return d
	}
	if in.GPU != "" || in.MemoryGiB > 0 {
		d.Plan, d.PlanErr = PlanBudget(cfg, in)
	} else {
		d.PlanErr = fmt.Errorf("no GPU or GPU memory given")
	}
	if d.Plan != nil {
		kv := d.Plan.KV
		d.KV = &kv
	} else {
		m, err := NewKVModel(cfg, d.Shape.TP, in.KVDtype)
		if err != nil {
			d.KVErr = fmt.Errorf("model config %s: %w", cfg.Path, err)
		} else {
			m = m.Stage(d.Shape.PP)
			d.KV = &m
		}
	}
	if d.Plan == nil {
		d.RooflineErr = d.PlanErr
	} else {
		d.Roofline, d.RooflineErr = NewRoofline(d.Plan)
	}
	return d
}

// Replan plans the same model and GPUs at another shape or setting. When the
// weights per GPU were given for the plan's shape, the figure is carried over to
// the new shape by the estimate's ratio (given ÷ estimated stays the same).
func Replan(p *PlanResult, change func(*BudgetInput)) (*PlanResult, error) {
	in := p.Input
	change(&in)
	if err := CarryWeights(p, &in); err != nil {
		return nil, err
	}
	return PlanBudget(p.Config, in)
}

// CarryWeights sets in.WeightsGiB for in's shape from the weights given for p's
// (by the estimate's ratio); weights that were estimated are left to be
// estimated again.
func CarryWeights(p *PlanResult, in *BudgetInput) error {
	if p.Input.WeightsGiB <= 0 || p.Weights == nil {
		return nil
	}
	if err := in.CheckShape(); err != nil {
		return err
	}
	in.WeightsGiB = float64(WeightsPerGPU(*p.Weights, in.Shape())) * p.WeightsScale / float64(1<<30)
	return nil
}

// CandidateShapes are the ways to lay one engine's GPUs out as DP × TP (with EP for
// an MoE), the plan's own shape first.
func CandidateShapes(p *PlanResult) []Shape {
	own := p.Shape
	shapes := []Shape{own}
	n := own.TP * own.DP
	moe := p.Config.Experts > 0
	for dp := 1; dp <= n; dp++ {
		if n%dp != 0 {
			continue
		}
		s := Shape{TP: n / dp, DP: dp, PP: own.PP, EP: moe && dp > 1, Replicas: own.Replicas}
		if s != own {
			shapes = append(shapes, s)
		}
	}
	return shapes
}
