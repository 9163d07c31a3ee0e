package analyze

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/engine"
)

// Server counters: the recorder's metrics sidecar holds every sample of every scrape
// of the server's /metrics. Each scrape is mapped to one engine-neutral snapshot
// (running, waiting, KV usage, preemptions, prefix cache, generated tokens, declared
// KV capacity), and each level gets the snapshots inside its steady-state window:
// gauges time-averaged (scrapes are evenly spaced) and maximised, counters as the
// increase from the window's first scrape to its last.
//
// The metric names, per engine, and their history are package engine's (one file
// per engine). Data-parallel vLLM engines carry engine="N": counts are summed, usage
// averaged. *_created series are creation times, never values. SGLang's DP
// attention gives one series per dp_rank / tp_rank: running and queue summed, usage
// and hit rate averaged. llama.cpp's NaN values (printed -nan by glibc) are no value.

// snapshot is one scrape mapped to engine-neutral figures (nil = not exposed).
type snapshot struct {
	engine        engine.Name
	running       *float64
	waiting       *float64
	kvUsage       *float64
	usedTokens    *float64
	preemptions   *float64 // counter
	retracted     *float64 // gauge: requests SGLang retracted (its preemption)
	prefixQueries *float64 // counter
	prefixHits    *float64 // counter
	hitRate       *float64 // gauge (SGLang)
	genTokens     *float64 // counter
	genThroughput *float64 // gauge (SGLang)
	declaredKV    *float64 // tokens the server says its KV cache holds
	maxRunning    *float64 // a declared cap on running requests (TensorRT-LLM max)
	refused       []string // declared figures out of range (policy_serverfacts.go)
	tiers         tierSnapshot
}

// counterSample is one scraped series value, as the sidecar stores it.
type counterSample struct {
	name, labels string
	value        float64
}

// combine accumulates a figure over the series of one scrape: sum or mean.
type combine struct {
	sum float64
	n   int
}

func (c *combine) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	c.sum += v
	c.n++
}

func (c *combine) total() *float64 {
	if c.n == 0 {
		return nil
	}
	v := c.sum
	return &v
}

func (c *combine) mean() *float64 {
	if c.n == 0 {
		return nil
	}
	v := c.sum / float64(c.n)
	return &v
}

// isServerCounter says whether the sidecar series name feeds a snapshot.
func isServerCounter(name string) bool {
	if strings.HasSuffix(name, "_created") {
		return false
	}
	_, ok := counterRoles[name]
	return ok || tierRole(name) != ""
}

// counterRoles maps each metric name to the snapshot figure it feeds: every
// engine's names (package engine) with their roles.
var counterRoles = func() map[string]string {
	m := map[string]string{}
	for _, e := range engine.All() {
		for name, role := range e.Metrics {
			m[name] = string(role)
		}
	}
	return m
}()

// mapSnapshot maps the samples of one scrape.
func mapSnapshot(samples []counterSample) snapshot {
	var s snapshot
	acc := map[string]*combine{}
	get := func(role string) *combine {
		c := acc[role]
		if c == nil {
			c = &combine{}
			acc[role] = c
		}
		return c
	}
	var declared combine
	s.tiers = mapTiers(samples)
	for _, x := range samples {
		role, ok := counterRoles[x.name]
		if !ok || strings.HasSuffix(x.name, "_created") {
			continue
		}
		if s.engine == "" || s.engine == engine.NIM {
			s.engine = engine.OfMetric(x.name)
		}
		switch role {
		case "config":
			labels := parseLabelText(x.labels)
			if v, ok := labelNumber(labels, "kv_cache_size_tokens"); ok {
				if declaredInRange(v, maxDeclaredTokens) {
					declared.add(v)
				} else {
					s.refused = append(s.refused, fmt.Sprintf("%s kv_cache_size_tokens = %g is outside 1..%d", x.name, v, int64(maxDeclaredTokens)))
				}
			} else if b, ok := labelNumber(labels, "num_gpu_blocks"); ok {
				if bs, ok := labelNumber(labels, "block_size"); ok {
					if declaredInRange(b, maxDeclaredBlocks) && declaredInRange(bs, maxBlockSize) && declaredInRange(b*bs, maxDeclaredTokens) {
						declared.add(b * bs)
					} else {
						s.refused = append(s.refused, fmt.Sprintf("%s num_gpu_blocks = %g × block_size = %g is outside 1..%d tokens", x.name, b, bs, int64(maxDeclaredTokens)))
					}
				}
			}
		case "trt_req":
			switch parseLabelText(x.labels)["request_type"] {
			case "active":
				get("running").add(x.value)
			case "waiting":
				get("waiting").add(x.value)
			case "max":
				get("maxrun").add(x.value)
			}
		case "trt_kv":
			get("trt_" + parseLabelText(x.labels)["kv_cache_block_type"]).add(x.value)
		default:
			get(role).add(x.value)
		}
	}
	total := func(role string) *float64 {
		if c := acc[role]; c != nil {
			return c.total()
		}
		return nil
	}
	mean := func(role string) *float64 {
		if c := acc[role]; c != nil {
			return c.mean()
		}
		return nil
	}
	s.running, s.waiting = total("running"), total("waiting")
	s.kvUsage = mean("kv")
	if s.kvUsage == nil {
		s.kvUsage = mean("kv_old")
	}
	s.usedTokens = total("used")
	s.preemptions = total("preempt")
	s.retracted = total("retracted")
	s.prefixQueries, s.prefixHits = total("pq"), total("ph")
	if s.prefixQueries == nil {
		s.prefixQueries, s.prefixHits = total("pq_old"), total("ph_old")
	}
	s.hitRate = mean("hitrate")
	s.genTokens = total("gen")
	s.genThroughput = total("genrate")
	s.declaredKV = declared.total()
	if d := total("declared"); d != nil {
		s.declaredKV = d
	}
	s.maxRunning = total("maxrun")
	if m := s.maxRunning; m != nil && !declaredInRange(*m, maxDeclaredSlots) {
		s.refused = append(s.refused, fmt.Sprintf("a declared cap of %g running requests is outside 1..%d", *m, maxDeclaredSlots))
		s.maxRunning = nil
	}
	// TensorRT-LLM counts blocks: used / max is the usage (its own fraction gauge
	// has been seen contradicting the block counts), max × tokens_per the capacity.
	if used, mx, per := total("trt_used"), total("trt_max"), mean("trt_tokens_per"); mx != nil && *mx > 0 {
		if used != nil {
			u := *used / *mx
			s.kvUsage = &u
		}
		if per != nil {
			c := *mx * *per
			s.declaredKV = &c
			if !declaredInRange(c, maxDeclaredTokens) {
				s.refused = append(s.refused, fmt.Sprintf("TensorRT-LLM's max KV blocks %g × tokens per block %g is outside 1..%d tokens", *mx, *per, int64(maxDeclaredTokens)))
				s.declaredKV = nil
			}
			if used != nil {
				t := *used * *per
				s.usedTokens = &t
			}
		}
	} else if f := mean("trt_fraction"); f != nil {
		s.kvUsage = f
	}
	if d := s.declaredKV; d != nil && !declaredInRange(*d, maxDeclaredTokens) {
		s.refused = append(s.refused, fmt.Sprintf("a declared KV capacity of %g tokens is outside 1..%d", *d, int64(maxDeclaredTokens)))
		s.declaredKV = nil
	}
	return s
}

// labelNumber reads a numeric label.
func labelNumber(labels map[string]string, key string) (float64, bool) {
	v, ok := labels[key]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseLabelText reads the canonical label text of the sidecar (`a="x",b="y"`).
func parseLabelText(text string) map[string]string {
	m := map[string]string{}
	for len(text) > 0 {
		eq := strings.IndexByte(text, '=')
		if eq < 0 || eq+1 >= len(text) || text[eq+1] != '"' {
			break
		}
		key := text[:eq]
		i := eq + 2
		var b strings.Builder
		for i < len(text) && text[i] != '"' {
			if text[i] == '\\' && i+1 < len(text) {
				if text[i+1] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(text[i+1])
				}
				i += 2
				continue
			}
			b.WriteByte(text[i])
			i++
		}
		m[key] = b.String()
		text = strings.TrimPrefix(text[min(i+1, len(text)):], ",")
	}
	return m
}

// timedSnapshot is a snapshot with its scrape time.
type timedSnapshot struct {
	ts int64
	snapshot
}

// snapshots groups the sidecar's counter samples by scrape and maps each.
func snapshots(samples map[int64][]counterSample) []timedSnapshot {
	out := make([]timedSnapshot, 0, len(samples))
	for ts, ss := range samples {
		out = append(out, timedSnapshot{ts, mapSnapshot(ss)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ts < out[j].ts })
	return out
}

// levelCounters maps the snapshots inside [ws, we] to the level's ServerCounters;
// nil when no scrape fell inside the window or the server exposes none of them.
func levelCounters(snaps []timedSnapshot, ws, we int64) *ServerCounters {
	lo := sort.Search(len(snaps), func(i int) bool { return snaps[i].ts >= ws })
	hi := sort.Search(len(snaps), func(i int) bool { return snaps[i].ts > we })
	in := snaps[lo:hi]
	if len(in) == 0 {
		return nil
	}
	c := &ServerCounters{Engine: in[0].engine, Scrapes: len(in)}
	gauge := func(get func(*snapshot) *float64) (mean, mx *float64) {
		var sum, m float64
		n := 0
		for i := range in {
			if v := get(&in[i].snapshot); v != nil {
				sum += *v
				if n == 0 || *v > m {
					m = *v
				}
				n++
			}
		}
		if n == 0 {
			return nil, nil
		}
		a := sum / float64(n)
		return &a, &m
	}
	// delta is a counter's increase over the window, and the seconds it spans.
	delta := func(get func(*snapshot) *float64) (d, secs float64, ok bool) {
		var first, last *timedSnapshot
		for i := range in {
			if get(&in[i].snapshot) != nil {
				if first == nil {
					first = &in[i]
				}
				last = &in[i]
			}
		}
		if first == nil || last == first {
			return 0, 0, false
		}
		d = *get(&last.snapshot) - *get(&first.snapshot)
		if d < 0 { // a counter reset (server restart) inside the window
			return 0, 0, false
		}
		return d, float64(last.ts-first.ts) / 1e9, true
	}
	c.RunningMean, c.RunningMax = gauge(func(s *snapshot) *float64 { return s.running })
	c.WaitingMean, c.WaitingMax = gauge(func(s *snapshot) *float64 { return s.waiting })
	c.KVUsageMean, c.KVUsageMax = gauge(func(s *snapshot) *float64 { return s.kvUsage })
	if d, secs, ok := delta(func(s *snapshot) *float64 { return s.preemptions }); ok && secs > 0 {
		c.Preemptions, c.PreemptionsPerS = ptr(d), ptr(d/secs)
	} else if _, m := gauge(func(s *snapshot) *float64 { return s.retracted }); m != nil {
		c.Preemptions = m // the most retracted at once: a count, with no rate
	}
	if q, _, ok := delta(func(s *snapshot) *float64 { return s.prefixQueries }); ok && q > 0 {
		if h, _, ok := delta(func(s *snapshot) *float64 { return s.prefixHits }); ok {
			c.PrefixHitRate = ptr(h / q)
		}
	} else if m, _ := gauge(func(s *snapshot) *float64 { return s.hitRate }); m != nil {
		c.PrefixHitRate = m
	}
	if d, secs, ok := delta(func(s *snapshot) *float64 { return s.genTokens }); ok && secs > 0 {
		c.GenerationTokS = ptr(d / secs)
	} else if m, _ := gauge(func(s *snapshot) *float64 { return s.genThroughput }); m != nil {
		c.GenerationTokS = m
	}
	c.Tiers = levelTiers(in)
	if c.RunningMean == nil && c.WaitingMean == nil && c.KVUsageMean == nil && c.GenerationTokS == nil && c.Tiers == nil {
		return nil
	}
	return c
}

// declaredKVTokens is the KV capacity the server's own metrics declare (the last
// scrape that has one), or nil.
func declaredKVTokens(snaps []timedSnapshot) *float64 {
	for i := len(snaps) - 1; i >= 0; i-- {
		if d := snaps[i].declaredKV; d != nil && *d > 0 {
			return d
		}
	}
	return nil
}

// attachServerCounters gives each level of r the server's counters in its window.
func attachServerCounters(r *Run, snaps []timedSnapshot) {
	if len(snaps) == 0 {
		return
	}
	var missing []string
	for i := range r.Levels {
		l := &r.Levels[i]
		if l.winEndNs > l.winStartNs {
			l.Server = levelCounters(snaps, l.winStartNs, l.winEndNs)
		}
		if l.Server == nil {
			missing = append(missing, fmt.Sprintf("level %d (%s, window %s)", l.Level, offeredLabel(*l), time.Duration(l.winEndNs-l.winStartNs).Round(time.Millisecond)))
		}
	}
	// A level the server's counters say nothing of is named, not dropped from
	// the table silently: its window was shorter than the scrape interval.
	if len(missing) > 0 && len(missing) < len(r.Levels) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("server counters: %d of %d levels have no scrape of the server's counters inside their window: %s (the scrape interval is longer than the window; longer levels or a shorter interval give them)",
			len(missing), len(r.Levels), strings.Join(missing, ", ")))
	}
}
