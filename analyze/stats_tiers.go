package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
)

// KV tiers: which tier served a level's prompt KV, from the server's own counters.
// A prompt token is served from the GPU's prefix cache, loaded from a host tier
// (vLLM's KV offloading connector, LMCache, SGLang's HiCache host pool) or
// recomputed (prefilled anew). Package engine holds each series' name and role
// (Engine.TierMetrics, Connector.TierMetrics, the RoleTier roles), with where
// each project's source defines them. Counters are read with or without the
// _total suffix prometheus_client adds.

// hostFullUsage is the host tier's fill at which it binds (as kvFullUsage for
// the GPU's).
const hostFullUsage = 0.95

// hostServesShare is the share of prompt tokens loaded from the host tier above
// which it is said to serve the overflow (below it, its loads are noise).
const hostServesShare = 0.02

// tierSeries maps each tier metric name (without _total) to its role: every
// engine's and connector's (package engine).
var tierSeries = engine.TierMetrics()

// tierRole is the role of a sidecar series name in the tier figures ("" none).
func tierRole(name string) engine.Role {
	if strings.HasSuffix(name, "_created") {
		return ""
	}
	if r, ok := tierSeries[name]; ok {
		return r
	}
	return tierSeries[strings.TrimSuffix(name, "_total")]
}

// labelled is the key of a role's series with one label's value: a counter split
// by that label is summed per value.
func labelled(role engine.Role, value string) string {
	return string(role) + "_" + value
}

// tierSnapshot is one scrape's tier figures (nil: not exposed). Counters are
// cumulative token (or byte) counts.
type tierSnapshot struct {
	srcGPU, srcHost, srcCompute *float64 // vLLM by source
	prompt, gpuHits, extHits    *float64 // vLLM
	loadBytes, storeBytes       *float64 // vLLM offload traffic
	hostUse                     *float64 // vLLM offload pool fill, or SGLang used/total
	hostTotal                   *float64 // SGLang host pool size, tokens
	lmHit, lmReq, lmBytes       *float64 // LMCache
	sPrompt, sDevice, sHost     *float64 // SGLang
	sStorage                    *float64
}

// mapTiers maps the tier series of one scrape.
func mapTiers(samples []counterSample) tierSnapshot {
	acc := map[string]*combine{}
	add := func(k string, v float64) {
		c := acc[k]
		if c == nil {
			c = &combine{}
			acc[k] = c
		}
		c.add(v)
	}
	for _, x := range samples {
		role := tierRole(x.name)
		switch role {
		case "":
			continue
		case engine.RoleTierPromptBySource:
			add(labelled(role, parseLabelText(x.labels)["source"]), x.value)
		case engine.RoleTierOffloadBytes:
			add(labelled(role, strings.ToLower(parseLabelText(x.labels)["transfer_type"])), x.value)
		case engine.RoleTierCachedBySource:
			add(labelled(role, parseLabelText(x.labels)["cache_source"]), x.value)
		default:
			add(string(role), x.value)
		}
	}
	total := func(k string) *float64 {
		if c := acc[k]; c != nil {
			return c.total()
		}
		return nil
	}
	var t tierSnapshot
	bySource := func(source string) *float64 { return total(labelled(engine.RoleTierPromptBySource, source)) }
	t.srcGPU, t.srcHost, t.srcCompute = bySource("local_cache_hit"), bySource("external_kv_transfer"), bySource("local_compute")
	t.prompt, t.gpuHits, t.extHits = total(string(engine.RoleTierPrompt)), total(string(engine.RoleTierGPUHits)), total(string(engine.RoleTierExternalHits))
	offload := func(transfer string) *float64 { return total(labelled(engine.RoleTierOffloadBytes, transfer)) }
	t.loadBytes, t.storeBytes = offload("cpu_to_gpu"), offload("gpu_to_cpu")
	if c := acc[string(engine.RoleTierHostUsage)]; c != nil {
		t.hostUse = c.mean()
	}
	t.lmHit, t.lmReq, t.lmBytes = total(string(engine.RoleTierConnectorHits)), total(string(engine.RoleTierConnectorRequested)), total(string(engine.RoleTierConnectorBytes))
	cached := func(source string) *float64 { return total(labelled(engine.RoleTierCachedBySource, source)) }
	t.sPrompt, t.sDevice, t.sHost, t.sStorage = total(string(engine.RoleTierCachedOf)), cached("device"), cached("host"), cached("storage")
	if used, tot := total(string(engine.RoleTierHostUsedTokens)), total(string(engine.RoleTierHostTokens)); used != nil && tot != nil && *tot > 0 {
		u := *used / *tot
		t.hostUse, t.hostTotal = &u, tot
	}
	return t
}

// levelTiers is the tier figures of the scrapes in one level's window; nil when
// the server reports no split of its prompt tokens and no host tier.
func levelTiers(in []timedSnapshot) *KVTiers {
	k := &KVTiers{}
	share := func(v, base float64) *float64 { return ptr(math.Max(0, math.Min(1, v/base))) }
	gpu, okG := deltaOf(in, func(t *tierSnapshot) *float64 { return t.srcGPU })
	host, okH := deltaOf(in, func(t *tierSnapshot) *float64 { return t.srcHost })
	comp, okC := deltaOf(in, func(t *tierSnapshot) *float64 { return t.srcCompute })
	prompt, okP := deltaOf(in, func(t *tierSnapshot) *float64 { return t.prompt })
	sPrompt, okSP := deltaOf(in, func(t *tierSnapshot) *float64 { return t.sPrompt })
	switch {
	case okG && okH && okC && gpu+host+comp > 0:
		k.Source, k.PromptTokens = engine.TierSeries(engine.RoleTierPromptBySource), gpu+host+comp
		k.GPUShare, k.HostShare, k.Recomputed = share(gpu, k.PromptTokens), share(host, k.PromptTokens), share(comp, k.PromptTokens)
	case okP && prompt > 0:
		gh, okGH := deltaOf(in, func(t *tierSnapshot) *float64 { return t.gpuHits })
		eh, okEH := deltaOf(in, func(t *tierSnapshot) *float64 { return t.extHits })
		src := []string{}
		if okGH {
			src = append(src, engine.TierSeries(engine.RoleTierGPUHits))
		}
		if !okEH {
			// LMCache without vLLM's external counters: its own hits.
			if lh, ok := deltaOf(in, func(t *tierSnapshot) *float64 { return t.lmHit }); ok {
				eh, okEH = lh, true
				src = append(src, engine.TierSeries(engine.RoleTierConnectorHits))
			}
		} else {
			src = append(src, engine.TierSeries(engine.RoleTierExternalHits))
		}
		if !okEH { // no host tier reported: prefix_hit_rate says what the GPU's cache served
			break
		}
		k.Source, k.PromptTokens = strings.Join(src, ", ")+" over "+engine.TierSeries(engine.RoleTierPrompt), prompt
		k.HostShare = share(eh, prompt)
		if okGH { // without the GPU's hits the rest is not known to be recomputed
			k.GPUShare = share(gh, prompt)
			k.Recomputed = share(math.Max(0, prompt-eh-gh), prompt)
		}
	case okSP && sPrompt > 0:
		dev, okD := deltaOf(in, func(t *tierSnapshot) *float64 { return t.sDevice })
		sh, okSH := deltaOf(in, func(t *tierSnapshot) *float64 { return t.sHost })
		st, okST := deltaOf(in, func(t *tierSnapshot) *float64 { return t.sStorage })
		if !okD && !okSH && !okST {
			break
		}
		k.Source, k.PromptTokens = engine.TierSeries(engine.RoleTierCachedBySource)+" by cache_source over "+engine.TierSeries(engine.RoleTierCachedOf), sPrompt
		k.GPUShare, k.HostShare = share(dev, sPrompt), share(sh, sPrompt)
		if okST {
			k.StorageShare = share(st, sPrompt)
		}
		k.Recomputed = share(math.Max(0, sPrompt-dev-sh-st), sPrompt)
	}
	// The host tier's fill and traffic.
	var sum, mx float64
	n := 0
	for i := range in {
		t := &in[i].tiers
		if t.hostUse != nil {
			sum += *t.hostUse
			mx = math.Max(mx, *t.hostUse)
			n++
		}
		if t.hostTotal != nil {
			k.HostCapacityTokens = t.hostTotal
		}
		if t.lmBytes != nil && (k.HostUsedBytesMax == nil || *t.lmBytes > *k.HostUsedBytesMax) {
			k.HostUsedBytesMax = ptr(*t.lmBytes)
		}
	}
	if n > 0 {
		k.HostUsageMean, k.HostUsageMax = ptr(sum/float64(n)), ptr(mx)
	}
	k.LoadBytesPerS = perSecond(in, func(t *tierSnapshot) *float64 { return t.loadBytes })
	k.StoreBytesPerS = perSecond(in, func(t *tierSnapshot) *float64 { return t.storeBytes })
	if k.Source == "" && k.HostUsageMax == nil && k.HostUsedBytesMax == nil && k.LoadBytesPerS == nil && k.StoreBytesPerS == nil {
		return nil
	}
	return k
}

// deltaOf is a counter's increase over the window (false: not two readings, or
// a reset).
func deltaOf(in []timedSnapshot, get func(*tierSnapshot) *float64) (float64, bool) {
	var first, last *float64
	for i := range in {
		if v := get(&in[i].tiers); v != nil {
			if first == nil {
				first = v
			}
			last = v
		}
	}
	if first == nil || last == first || *last < *first {
		return 0, false
	}
	return *last - *first, true
}

// perSecond is a counter's rate over the window (nil: not two readings, or a
// reset).
func perSecond(in []timedSnapshot, get func(*tierSnapshot) *float64) *float64 {
	var first, last *timedSnapshot
	for i := range in {
		if get(&in[i].tiers) != nil {
			if first == nil {
				first = &in[i]
			}
			last = &in[i]
		}
	}
	if first == nil || last == first || last.ts <= first.ts {
		return nil
	}
	d := *get(&last.tiers) - *get(&first.tiers)
	if d < 0 {
		return nil
	}
	return ptr(d / (float64(last.ts-first.ts) / 1e9))
}

// hasHostTier says whether a level's figures show a host tier at all.
func (k *KVTiers) hasHostTier() bool {
	return k != nil && (k.HostUsageMax != nil || k.HostUsedBytesMax != nil || k.LoadBytesPerS != nil || k.StoreBytesPerS != nil ||
		(k.HostShare != nil && *k.HostShare > 0) || k.HostCapacityTokens != nil)
}

// sharesText is "GPU prefix hits 40%, host tier 35%, recomputed 25%" (the shares
// known).
func (k *KVTiers) sharesText() string {
	var parts []string
	for _, s := range []struct {
		name string
		v    *float64
	}{{"GPU prefix hits", k.GPUShare}, {"host tier", k.HostShare}, {"storage", k.StorageShare}, {"recomputed", k.Recomputed}} {
		if s.v != nil {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", s.name, 100**s.v))
		}
	}
	return strings.Join(parts, ", ")
}

// tierVerdict names the KV tier that binds (r.KVTier) and adds to the verdict's
// evidence the share of prompt KV each tier served per level, when the server
// reports a host tier.
func tierVerdict(r *Run) {
	levels := validLevels(r.Levels)
	host := false
	for _, l := range levels {
		if l.Server != nil && l.Server.Tiers.hasHostTier() {
			host = true
		}
	}
	if !host {
		return
	}
	var per []string
	for _, l := range levels {
		if k := l.Server.tiersOrNil(); k != nil && k.Source != "" {
			per = append(per, offeredLabel(l)+" "+k.sharesText())
		}
	}
	if len(per) > 0 {
		r.Ceiling.Evidence = append(r.Ceiling.Evidence, "prompt KV served per level, of prompt tokens: "+strings.Join(per, "; "))
	}
	for _, l := range levels {
		s := l.Server
		k := s.tiersOrNil()
		if k == nil {
			continue
		}
		var b *KVTierBinding
		switch {
		case k.HostUsageMax != nil && *k.HostUsageMax >= hostFullUsage:
			ev := fmt.Sprintf("the host KV tier is full at %s (up to %s used", offeredLabel(l), pct(k.HostUsageMax))
			if k.HostCapacityTokens != nil {
				ev += fmt.Sprintf(" of %s tokens", groupDigits(int64(*k.HostCapacityTokens)))
			}
			ev += "): the host tier binds; past it, evicted prefixes are recomputed"
			if k.Recomputed != nil {
				ev += fmt.Sprintf(" (%.0f%% of prompt tokens recomputed here)", 100**k.Recomputed)
			}
			b = &KVTierBinding{Tier: "host", Level: l.Level, Evidence: ev}
		case kvFull(s) && k.HostShare != nil && *k.HostShare >= hostServesShare:
			b = &KVTierBinding{Tier: "gpu", Level: l.Level, Evidence: fmt.Sprintf(
				"the GPU KV cache is full at %s (usage up to %s) and the host tier serves the overflow (%s): the GPU tier binds, extended by the host tier",
				offeredLabel(l), pct(s.KVUsageMax), k.sharesText())}
		case kvFull(s):
			b = &KVTierBinding{Tier: "gpu", Level: l.Level, Evidence: fmt.Sprintf(
				"the GPU KV cache is full at %s (usage up to %s) and the host tier serves almost none of it (%s): the GPU tier binds",
				offeredLabel(l), pct(s.KVUsageMax), k.sharesText())}
		}
		if b != nil {
			r.KVTier = b
			r.Ceiling.Evidence = append(r.Ceiling.Evidence, b.Evidence)
			return
		}
	}
}

// tiersOrNil is s.Tiers, nil for a nil s.
func (s *ServerCounters) tiersOrNil() *KVTiers {
	if s == nil {
		return nil
	}
	return s.Tiers
}
