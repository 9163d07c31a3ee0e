package analyze

import (
	"fmt"
	"sort"
)

// How a server lays its KV cache out, and so what its capacity figure means.
//
// vLLM, SGLang, TGI and TensorRT-LLM hold one pool per engine (per DP rank) that
// every running request draws from: its tokens over a request's tokens is how many
// requests it holds at once. llama.cpp differs. Its server reports, per slot, the
// context a slot may use (/props default_generation_settings.n_ctx, /slots n_ctx,
// /v1/models meta.n_ctx: all llama_n_ctx_seq) and the slot count (total_slots), but
// not the layout (llama.cpp server.cpp, server-context.cpp):
//   - unified (--kv-unified, and the default when -np is not given, which starts 4
//     slots): the slots share one cache of n_ctx tokens, and each slot's n_ctx is
//     that whole cache. When the running requests fill it, llama_decode finds no
//     room and the server fails every running request with "Context size has been
//     exceeded.";
//   - per slot (-np N without --kv-unified): each slot owns n_ctx ÷ N of the -c
//     cells, reported as its n_ctx, and holds one request of at most that many
//     tokens; a longer one is refused ("exceeds the available context size"). The
//     slot count binds, never a pooled figure.
//
// So the cache holds n_ctx tokens (unified) or slots × n_ctx (per slot). The
// analysis tells them apart by what the server did: KV-exhaustion errors happen
// only in a shared cache; more tokens held at once than one n_ctx happen only with
// a cache per slot. Otherwise both bounds are given, and no figure is called
// declared.

const (
	LayoutShared  = "shared"
	LayoutUnified = "unified"
	LayoutPerSlot = "per_slot"
	LayoutUnknown = "unknown"
)

// kvFailureShare is the share of a level's requests that must fail with the
// server's KV-exhaustion words before the level counts as one where the cache ran
// out (a single failure could be a one-off).
const kvFailureShare = 0.01

// kvFailLevel is the first level, by offered concurrency, where the server said its
// KV cache ran out; nil when it never did.
func kvFailLevel(levels []Level) *Level {
	ls := sortedLevels(levels)
	for i := range ls {
		l := ls[i]
		n := l.ErrorKinds[KindKVExhausted]
		if n > 0 && float64(n) >= kvFailureShare*float64(l.Requests) {
			return &l
		}
	}
	return nil
}

// kvMessage is the server's own words for the level's KV failures.
func kvMessage(l Level) string {
	for _, g := range l.ErrorGroups {
		if g.Kind == KindKVExhausted {
			return g.Message
		}
	}
	return ""
}

// llamaLayout tells llama.cpp's KV layout from the slots, their n_ctx and the levels.
func llamaLayout(slots, nCtx int64, levels []Level) (layout, evidence string) {
	if slots == 1 {
		return LayoutUnified, "one slot: its n_ctx is the whole cache"
	}
	if f := kvFailLevel(levels); f != nil {
		return LayoutUnified, fmt.Sprintf("the server failed %d of %d requests at %s with «%s»: only a cache shared by the slots runs out while each request fits a slot's n_ctx (%s tokens), so the cache is one n_ctx",
			f.ErrorKinds[KindKVExhausted], f.Requests, offeredLabel(*f), kvMessage(*f), groupDigits(nCtx))
	}
	// A level whose decoding requests held more prompt tokens at once than one n_ctx
	// (without KV errors) rules the shared cache out.
	ls := sortedLevels(levels)
	sort.SliceStable(ls, func(i, j int) bool { return held(ls[i]) > held(ls[j]) })
	if len(ls) > 0 && held(ls[0]) > 1.05*float64(nCtx) {
		l := ls[0]
		return LayoutPerSlot, fmt.Sprintf("at %s the server held %.1f decoding requests of %.0f prompt tokens at once (at least %s tokens), more than one n_ctx (%s), without KV errors: each slot has its own cache",
			offeredLabel(l), l.DecodeConcurrency, l.MeanPromptTokens, groupDigits(int64(held(l))), groupDigits(nCtx))
	}
	return LayoutUnknown, fmt.Sprintf("llama.cpp reports %d slots of n_ctx %s tokens but not whether they share one cache (--kv-unified, its default without -np) or each own theirs (-np without --kv-unified); the sweep showed neither KV errors nor more than one n_ctx held at once",
		slots, groupDigits(nCtx))
}

// held is a lower bound on the tokens a level's decoding requests held at once:
// each holds at least its prompt.
func held(l Level) float64 { return l.DecodeConcurrency * l.MeanPromptTokens }

// llamaCapacity fills the llama.cpp part of the capacity section: the layout, the
// slots, and the capacity it implies (or both bounds). It returns the function that
// turns a request length into the requests the cache holds at once, nil when the
// layout is unknown.
func llamaCapacity(c *Capacity, slots, nCtx int64, levels []Level) func(tokens float64) float64 {
	layout, ev := llamaLayout(slots, nCtx, levels)
	c.Layout, c.LayoutEvidence = layout, ev
	c.Slots, c.SlotContextTokens = ptr(slots), ptr(nCtx)
	switch layout {
	case LayoutUnified:
		c.KVCapacityTokens, c.DeclaredKVCapacityTokens = ptr(nCtx), ptr(nCtx)
		c.Source = "declared"
		c.SourceDetail = fmt.Sprintf("llama.cpp n_ctx %s tokens (/props), one cache shared by its %d slots", groupDigits(nCtx), slots)
		return func(tokens float64) float64 { return float64(nCtx) / tokens }
	case LayoutPerSlot:
		total := slots * nCtx
		c.KVCapacityTokens, c.DeclaredKVCapacityTokens = ptr(total), ptr(total)
		c.Source = "declared"
		c.SourceDetail = fmt.Sprintf("llama.cpp %d slots × n_ctx %s tokens (/props), a cache per slot: each holds one request of at most %s tokens", slots, groupDigits(nCtx), groupDigits(nCtx))
		return func(tokens float64) float64 {
			if tokens > float64(nCtx) {
				return 0
			}
			return float64(slots)
		}
	}
	c.KVCapacityMinTokens, c.KVCapacityMaxTokens = ptr(nCtx), ptr(slots*nCtx)
	c.SourceDetail = fmt.Sprintf("llama.cpp n_ctx %s tokens per slot, %d slots (/props): %s tokens if they share one cache, %s if each owns its own",
		groupDigits(nCtx), slots, groupDigits(nCtx), groupDigits(slots*nCtx))
	return nil
}
