package analyze

import (
	"encoding/json"
	"fmt"

	"github.com/ceiling-llm/ceiling/capacity"
	"github.com/ceiling-llm/ceiling/engine"
)

// The modelled reserve of a run's capacity model is the engine's the run measured:
// where the options model the reserve for no engine in particular (the CLI without
// --engine), a run of an SGLang server gets SGLang's reserve, not vLLM's. An engine
// the reserve model does not cover gets vLLM V1's, as the plan's default, and the
// capacity section says so.

// runReserve is opt with the reserve modelled for the run's engine kind, and, where
// the reserve model does not cover that engine, what the capacity should say about
// the vLLM reserve it falls back to ("" otherwise).
func runReserve(opt Options, kind engine.Name) (Options, string) {
	r := opt.BudgetInput.Reserve
	if r == nil || r.Engine != "" {
		return opt, "" // a flat reserve, or the engine was chosen
	}
	eng, modelled := capacity.ReserveEngineOf(string(kind))
	fallback := ""
	if !modelled {
		who := fmt.Sprintf("the run's engine (%s) has no reserve model", kind)
		if kind == "" || kind == engine.Unknown {
			who = "the run's engine is unknown"
		}
		fallback = fmt.Sprintf("%s: vLLM V1's is assumed (--engine or --reserve-gib to choose)", who)
	}
	if eng == capacity.EngineVLLM {
		return opt, fallback // what the options' deployment models already
	}
	res := *r
	res.Engine = eng
	opt.BudgetInput.Reserve = &res
	if opt.Deployment != nil {
		opt.Deployment = capacity.DeploymentOf(opt.Deployment.Config, opt.BudgetInput)
	}
	return opt, ""
}

// noteReserveFallback adds fallback to the assumption of c's modelled reserve, on
// a copy: the plan the runs share keeps its own.
func noteReserveFallback(c *Capacity, fallback string) {
	if c == nil || c.Budget == nil || c.Budget.ReserveModel == nil || fallback == "" {
		return
	}
	b, m := *c.Budget, *c.Budget.ReserveModel
	m.Assumption += "; " + fallback
	b.ReserveModel = &m
	c.Budget = &b
}

// runKind is the engine kind of the server r was recorded from (r.Server), or
// engine.Unknown.
func runKind(r *Run) engine.Name {
	var sm serverMeta
	if r == nil || len(r.Server) == 0 || json.Unmarshal(r.Server, &sm) != nil || sm.Kind == "" {
		return engine.Unknown
	}
	return sm.Kind
}
