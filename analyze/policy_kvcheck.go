package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ceiling-llm/ceiling/internal/numfmt"
)

// The three-way KV check and the server's verdict. Three figures for one KV cache:
//
//   - modelled: the capacity model's tokens (config.json + hardware), per replica;
//   - declared: what the server says (the recorder's probe: vLLM cache_config_info
//     kv_cache_size_tokens, else num_gpu_blocks × block_size; SGLang
//     max_total_num_tokens; llama.cpp n_ctx over its slots; else the same
//     figures in the metrics sidecar);
//   - observed: from the server's own counters under load, the tokens its running
//     requests hold over the KV usage it reports: running × (mean prompt + half the
//     mean output, what a request holds on average while it decodes) / usage, at the
//     valid level whose mean usage is highest (at least kvObservedMinUsage); a
//     shared prefix the KV ceiling counts once is counted once here too.
//
// They agree when each lies within kvTolerance of the declared figure (or of the
// modelled one when the server declares none). The observed limit is also given as a
// level: the first at which the server's KV usage reached kvFullUsage, it preempted,
// or requests waited in it with the cache at least kvPressedUsage full.

const (
	kvTolerance        = 0.25
	kvObservedMinUsage = 0.2
	kvFullUsage        = 0.95
	kvPressedUsage     = 0.8
	// slotPinned: running within this share of the declared slots counts as pinned.
	slotPinned = 0.95
)

// serverVerdict fills r.KVCheck, r.ServerBinding and their warnings, and names the
// server's limit in r.Ceiling when its counters show one.
func serverVerdict(r *Run, snaps []timedSnapshot, opt Options) {
	var declared *int64
	if c := r.Capacity; c != nil && c.DeclaredKVCapacityTokens != nil {
		declared = c.DeclaredKVCapacityTokens
	} else if d := declaredKVTokens(snaps); d != nil {
		v := int64(math.Round(*d))
		declared = &v
	}
	var modelled *int64
	if c := r.Capacity; c != nil && c.ModelledKVCapacityTokens != nil {
		modelled = c.ModelledKVCapacityTokens
	}
	levels := validLevels(r.Levels)
	sort.SliceStable(levels, func(i, j int) bool { return offered(levels[i]) < offered(levels[j]) })

	kc := &KVCheck{ModelledTokens: modelled, DeclaredTokens: declared, Tolerance: kvTolerance}
	var best *Level
	for i := range levels {
		l := &levels[i]
		s := l.Server
		if s == nil || s.KVUsageMean == nil || s.RunningMean == nil || *s.KVUsageMean < kvObservedMinUsage || *s.RunningMean <= 0 {
			continue
		}
		if best == nil || *s.KVUsageMean > *best.Server.KVUsageMean {
			best = l
		}
	}
	if best != nil && best.MeanPromptTokens+best.MeanOutputTokens > 0 {
		held := heldTokens(r.Capacity, *best.Server.RunningMean, best.MeanPromptTokens, best.MeanOutputTokens)
		v := int64(math.Round(held / *best.Server.KVUsageMean))
		kc.ObservedTokens = &v
		lv := best.Level
		kc.ObservedFromLevel = &lv
	}
	for _, l := range levels {
		if s := l.Server; s != nil && kvFull(s) {
			lv := l.Level
			kc.FullAtLevel = &lv
			break
		}
	}
	if kc.ModelledTokens == nil && kc.DeclaredTokens == nil && kc.ObservedTokens == nil {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, serverBinding(r, levels)...)
		return
	}
	kc.judge()
	r.KVCheck = kc
	if kc.Agree != nil && !*kc.Agree {
		r.Warnings = append(r.Warnings, "KV capacity check: "+kc.Verdict)
	}
	r.Ceiling.Evidence = append(r.Ceiling.Evidence, serverBinding(r, levels)...)
}

// kvFull says whether a level's server counters show a full or pressed KV cache.
func kvFull(s *ServerCounters) bool {
	if s.KVUsageMax != nil && *s.KVUsageMax >= kvFullUsage {
		return true
	}
	if s.Preemptions != nil && *s.Preemptions > 0 {
		return true
	}
	return s.WaitingMean != nil && *s.WaitingMean >= 0.5 && s.KVUsageMax != nil && *s.KVUsageMax >= kvPressedUsage
}

// judge sets Agree and Verdict from the figures known.
func (kc *KVCheck) judge() {
	type fig struct {
		name string
		v    int64
	}
	var figs []fig
	for _, f := range []struct {
		name string
		v    *int64
	}{{"declared", kc.DeclaredTokens}, {"modelled", kc.ModelledTokens}, {"observed", kc.ObservedTokens}} {
		if f.v != nil && *f.v > 0 {
			figs = append(figs, fig{f.name, *f.v})
		}
	}
	var parts []string
	for _, f := range figs {
		parts = append(parts, fmt.Sprintf("%s %s", f.name, groupDigits(f.v)))
	}
	if len(figs) < 2 {
		kc.Verdict = "only one figure known (" + strings.Join(parts, "") + "): nothing to compare"
		return
	}
	ref := figs[0]
	agree := true
	var off []string
	for _, f := range figs[1:] {
		d := math.Abs(float64(f.v)-float64(ref.v)) / float64(ref.v)
		if d > kvTolerance {
			agree = false
			off = append(off, fmt.Sprintf("%s is %+.0f%% from %s", f.name, 100*(float64(f.v)/float64(ref.v)-1), ref.name))
		}
	}
	kc.Agree = &agree
	if agree {
		kc.Verdict = fmt.Sprintf("%s tokens agree within %.0f%%", strings.Join(parts, ", "), 100*kvTolerance)
		return
	}
	var causes []string
	for _, o := range off {
		switch {
		case strings.HasPrefix(o, "modelled"):
			causes = append(causes, "for the model: a wrong --model-config, --weights-gib, --gpu-util, --reserve-gib or --kv-dtype, or a hybrid model (sliding-window or linear-attention layers) the model counts differently")
		case strings.HasPrefix(o, "observed"):
			causes = append(causes, "for the observed figure: prefix caching (shared prefixes are held once), a server whose usage gauge counts whole blocks or reserves ahead, or a hybrid model whose num_gpu_blocks × block_size misstates the capacity (block_size is the smallest group's)")
		}
	}
	kc.Verdict = fmt.Sprintf("%s tokens disagree beyond %.0f%% (%s); likely causes %s",
		strings.Join(parts, ", "), 100*kvTolerance, strings.Join(off, "; "), strings.Join(causes, "; "))
}

// serverBinding finds the limit the server's counters show: its KV cache full and
// preempting (or pressed with requests waiting), or its running count pinned at a
// cap (declared slots / max-num-seqs) while requests wait. When the client-side
// ceiling lies at or below that level, the ceiling's binding is named after the
// server's limit, and the client's evidence stays beside it. It returns the evidence
// lines to add to the ceiling.
func serverBinding(r *Run, levels []Level) []string {
	var slots float64
	var sm struct {
		Slots *int64 `json:"slots"`
	}
	if len(r.Server) > 0 && json.Unmarshal(r.Server, &sm) == nil && sm.Slots != nil {
		slots = float64(*sm.Slots)
	}
	for _, l := range levels {
		s := l.Server
		if s == nil {
			continue
		}
		client := fmt.Sprintf("client side: %.1f decoding and %.1f waiting on average at %s", l.DecodeConcurrency, l.WaitingConcurrency, offeredLabel(l))
		var b *ServerBinding
		switch {
		case kvFull(s):
			ev := fmt.Sprintf("the server's KV cache is full at %s: usage up to %s", offeredLabel(l), pct(s.KVUsageMax))
			if s.Preemptions != nil && *s.Preemptions > 0 {
				ev += fmt.Sprintf(", %.0f preemptions", *s.Preemptions)
			}
			if s.WaitingMean != nil {
				ev += fmt.Sprintf(", %.1f requests waiting in the server on average", *s.WaitingMean)
			}
			b = &ServerBinding{Limit: "kv", Level: l.Level, Evidence: []string{ev, client}}
			if c := r.Capacity; c != nil && c.PrefixSharing != nil && c.PrefixSharing.Text != "" {
				// What the full cache holds: with shared prefixes counted once
				// (or why not), as the client-side KV ceiling's evidence says it.
				b.Evidence = append(b.Evidence, c.PrefixSharing.Text)
			}
		case s.RunningMax != nil && s.WaitingMean != nil && *s.WaitingMean >= 0.5 && slots > 0 && *s.RunningMax >= slotPinned*slots:
			b = &ServerBinding{Limit: "batch", Level: l.Level, Evidence: []string{
				fmt.Sprintf("the server's running count is pinned at its %g slots at %s (running %.1f on average, at most %.0f; %.1f waiting in the server)",
					slots, offeredLabel(l), *s.RunningMean, *s.RunningMax, *s.WaitingMean), client}}
		}
		if b == nil {
			continue
		}
		r.ServerBinding = b
		if b.Limit == "batch" && r.Ceilings.Batch == nil {
			// The server reported its slots and ran them all while requests waited:
			// that is its batch limit, even where the client's decode concurrency
			// (which counts a slot's prefill as waiting) drew no plateau.
			v := slots
			r.Ceilings.Batch = &v
		}
		c := r.Ceiling.Concurrency
		if c == nil || *c > offered(l)*(1+tieTolerance) || r.Ceiling.Binding == b.Limit {
			return b.Evidence
		}
		if b.Limit == "batch" && *c < slots*(1-tieTolerance) {
			// A ceiling well below the slots is another limit (the knee, an SLO):
			// it keeps its own name, and the pinned slots stand beside it.
			return append([]string{fmt.Sprintf("the server's %g slots fill only above this ceiling", slots)}, b.Evidence...)
		}
		prev := r.Ceiling.Binding
		r.Ceiling.Binding = b.Limit
		if b.Limit == "batch" {
			// Labelled with its own figure, never a neighbour's: the slots.
			v := slots
			r.Ceiling.Concurrency = &v
		}
		return append([]string{"the server's counters show the binding limit (the client-side analysis named " + prev + ")"}, b.Evidence...)
	}
	return nil
}

// pct is a fraction as a whole percentage.
func pct(v *float64) string { return numfmt.Percent(v) }
