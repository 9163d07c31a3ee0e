package record

import (
	"fmt"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/trace"
)

// The pre-flight context check: before any request, the workload's lengths are
// compared with the context the server revealed (max_model_len; llama.cpp's n_ctx,
// which is per slot). A request that does not fit fails (vLLM and llama.cpp answer
// HTTP 400) or has its output cut at the context's end (llama.cpp), so a sweep of
// them measures nothing the user asked for: it is refused, with the reason and the
// fix, when more than maxOverContext of the requests would not fit; a few that
// would not (a length distribution's tail) are a warning.
const (
	maxOverContext = 0.05
	// contextDraws is how many requests' lengths are checked: the first of every
	// level's sequence of draws (levels share one, see workload.Prompt).
	contextDraws = 1000
)

// contextFit is what the check found: how many of the requests checked need more
// than the context, and the largest.
type contextFit struct {
	checked, over  int
	largest        int // prompt + max_tokens of the largest request
	largestPrompt  int
	largestOutput  int
	promptOverOnly int // requests whose prompt alone does not fit
}

// checkContext compares the plan's requests with srv's context. It returns a
// warning ("" none) or the refusal.
func (r *recorder) checkContext(srv trace.ServerInfo) (string, error) {
	o := &r.opts
	if o.Dataset != "" || srv.MaxModelLen == nil || *srv.MaxModelLen <= 0 {
		return "", nil // a dataset is filtered to max_model_len; no context known
	}
	limit := int(*srv.MaxModelLen)
	var fit contextFit
	add := func(prompt, output int) {
		fit.checked++
		total := prompt + output
		if total > fit.largest {
			fit.largest, fit.largestPrompt, fit.largestOutput = total, prompt, output
		}
		if total > limit {
			fit.over++
		}
		if prompt >= limit {
			fit.promptOverOnly++
		}
	}
	switch {
	case r.replay != nil:
		for _, e := range r.replay {
			out := e.outputTokens
			if out == 0 {
				out = o.OutputTokens
			}
			if e.prompt == "" {
				add(e.promptTokens, out)
			}
		}
	default:
		cfg, err := o.syntheticConfig(nil)
		if err != nil {
			return "", err
		}
		turns := max(o.Turns, 1)
		for k := range int64(contextDraws) {
			p, out := cfg.Lengths(k)
			// A conversation's last turn resends the whole history.
			add(turns*p+(turns-1)*out, out)
		}
	}
	if fit.over == 0 {
		return "", nil
	}
	where, fix := contextWords(srv, limit)
	share := float64(fit.over) / float64(fit.checked)
	what := fmt.Sprintf("%d of the %d requests checked (%.0f%%) need more than the %d tokens %s (the largest: a %d-token prompt + max_tokens %d = %d)",
		fit.over, fit.checked, 100*share, limit, where, fit.largestPrompt, fit.largestOutput, fit.largest)
	if share <= maxOverContext {
		return what + ": those will fail or have their output cut short", nil
	}
	return "", fmt.Errorf("the workload does not fit the server's context: %s, so they would %s; nothing was sent. %s",
		what, consequence(srv, fit), fix)
}

// contextWords names the context limit of srv and how to fix a workload over it.
func contextWords(srv trace.ServerInfo, limit int) (where, fix string) {
	if e, _ := engine.Of(srv.Kind); e.SlotContext && srv.NCtx != nil {
		where = "a " + e.Title + " slot holds (n_ctx per slot"
		if srv.Slots != nil {
			where += fmt.Sprintf(", %d slots", *srv.Slots)
		}
		where += ")"
		return where, "Fix: shorten --prompt-tokens / --output-tokens, or " + e.SlotContextFix + "."
	}
	return "of the server's max_model_len", "Fix: shorten --prompt-tokens / --output-tokens, or serve the model with a longer context (" + engine.ContextFlags() + ")."
}

// consequence says what the server does with a request over its context.
func consequence(srv trace.ServerInfo, fit contextFit) string {
	if e, _ := engine.Of(srv.Kind); e.CutsAtContext && fit.promptOverOnly*2 < fit.over {
		return "have their output cut at the context's end (" + e.Title + " stops generating there), not the lengths asked"
	}
	return "be refused (HTTP 400: the request exceeds the context)"
}
