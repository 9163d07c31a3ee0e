package enginetest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// offloadSim is the vLLM scheduler with a CPU KV offload tier of hostTokens, as
// vLLM's OffloadingConnector (Config.HostKVTokens): the full blocks a request had
// computed when it is preempted are kept in host memory (gpu_to_cpu), and when it
// is scheduled again they are loaded back (cpu_to_gpu) instead of recomputed, as
// the connector's matched external tokens are: the scheduler allocates their
// blocks and computes only the rest. The host tier evicts its least recently
// stored entries to make room, and what it no longer holds is recomputed. It
// stores on preemption only (the connector stores every full block as it is
// computed; only the preempted ones are ever loaded here, prompts being unique).
type offloadSim struct {
	*vllmSim
	hostTokens int
	host       map[*simReq]int // tokens stored per request
	order      []*simReq       // stored entries, oldest first
	hostUsed   int
	pending    map[*simReq]int // loads set up for a request waiting to be scheduled again
	seen       map[*simReq]int // preemptions already stored, per request
	// Counters, tokens: prompt tokens by source as vLLM's
	// vllm:prompt_tokens_by_source counts them (a resumed request's context
	// counted again), and the tokens moved each way.
	localCompute, external int64
	loaded, stored         int64
}

// offloadBytesPerToken is the KV bytes a token of the imitated model moves: a
// nominal figure for the traffic counters (Llama 3.1 8B in bf16: 32 layers × 8
// KV heads × 128 × 2 × 2 bytes).
const offloadBytesPerToken = 131072

func newOffloadSim(v *vllmSim, hostTokens int) *offloadSim {
	return &offloadSim{vllmSim: v, hostTokens: hostTokens, host: map[*simReq]int{},
		pending: map[*simReq]int{}, seen: map[*simReq]int{}}
}

// checkOffload checks Config.HostKVTokens.
func checkOffload(cfg *Config) error {
	switch {
	case cfg.HostKVTokens < 0:
		return fmt.Errorf("config HostKVTokens %d: want a token count ≥ 0", cfg.HostKVTokens)
	case cfg.HostKVTokens > 0 && cfg.Scheduler != SchedulerVLLM:
		return errors.New("config HostKVTokens: only the vLLM scheduler has a CPU offload tier")
	}
	return nil
}

func (o *offloadSim) step() stepOut {
	type before struct{ computed, context int }
	pre := map[*simReq]before{}
	for _, r := range o.running {
		pre[r] = before{r.computed, r.prompt + r.generated}
	}
	// A preempted request the host tier still holds resumes from it.
	resuming := map[*simReq]int{}
	for _, r := range o.waiting {
		if r.preempted == 0 || r.canceled {
			continue
		}
		resuming[r] = r.prompt + r.generated
		if n, ok := o.host[r]; ok && r.computed == 0 {
			o.evict(r)
			r.computed = n
			o.pending[r] = n
		}
	}
	out := o.vllmSim.step()
	for _, r := range out.admitted {
		o.localCompute += int64(r.prompt)
	}
	stillWaiting := map[*simReq]bool{}
	for _, r := range o.waiting {
		stillWaiting[r] = true
	}
	for r, context := range resuming {
		if stillWaiting[r] {
			continue
		}
		n := o.pending[r]
		delete(o.pending, r)
		if r.canceled {
			continue
		}
		o.external += int64(n)
		o.loaded += int64(n)
		o.localCompute += int64(context - n)
	}
	for _, r := range o.waiting {
		if r.preempted <= o.seen[r] {
			continue
		}
		o.seen[r] = r.preempted
		if n := pre[r].computed / blockSize * blockSize; n > 0 && n <= o.hostTokens {
			for o.hostUsed+n > o.hostTokens {
				o.evict(o.order[0])
			}
			o.host[r] = n
			o.order = append(o.order, r)
			o.hostUsed += n
			o.stored += int64(n)
		}
	}
	for r := range o.seen {
		if r.done {
			delete(o.seen, r)
		}
	}
	return out
}

// evict drops r's entry from the host tier.
func (o *offloadSim) evict(r *simReq) {
	n, ok := o.host[r]
	if !ok {
		return
	}
	delete(o.host, r)
	o.order = remove(o.order, r)
	o.hostUsed -= n
}

func (o *offloadSim) cancel(r *simReq) {
	o.vllmSim.cancel(r)
	if _, ok := o.pending[r]; ok {
		// Its preset KV was never allocated: release must not count it.
		r.computed = 0
		delete(o.pending, r)
	}
}

// offloadState is what /metrics shows of the offload tier.
type offloadState struct {
	usage                  float64
	localCompute, external int64
	loadBytes, storeBytes  int64
}

// offload is the engine's offload tier's state (false: it has none).
func (l *simLoop) offload() (offloadState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.sim.(*offloadSim)
	if !ok {
		return offloadState{}, false
	}
	return offloadState{usage: float64(o.hostUsed) / float64(o.hostTokens), localCompute: o.localCompute, external: o.external,
		loadBytes: o.loaded * offloadBytesPerToken, storeBytes: o.stored * offloadBytesPerToken}, true
}

// writeVLLMOffload writes the offload tier's series under the names vLLM gives
// them (vllm/v1/metrics/loggers.py, the offloading connector's metrics).
func (s *Server) writeVLLMOffload(b *strings.Builder, labels func(int) string) {
	states := make([]offloadState, len(s.engines))
	for i, l := range s.engines {
		st, ok := l.offload()
		if !ok {
			return
		}
		states[i] = st
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fmt.Fprintf(b, "# HELP vllm:prompt_tokens_by_source_total Number of prompt tokens by source.\n# TYPE vllm:prompt_tokens_by_source_total counter\n")
	for i, st := range states {
		for _, src := range []struct {
			name string
			v    int64
		}{{"local_compute", st.localCompute}, {"local_cache_hit", 0}, {"external_kv_transfer", st.external}} {
			fmt.Fprintf(b, "vllm:prompt_tokens_by_source_total{%s,source=\"%s\"} %d\n", labels(i), src.name, src.v)
		}
	}
	fmt.Fprintf(b, "# HELP vllm:external_prefix_cache_hits_total External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.\n# TYPE vllm:external_prefix_cache_hits_total counter\n")
	for i, st := range states {
		fmt.Fprintf(b, "vllm:external_prefix_cache_hits_total{%s} %d\n", labels(i), st.external)
	}
	fmt.Fprintf(b, "# HELP vllm:kv_offload_total_bytes_total Number of bytes offloaded by KV connector\n# TYPE vllm:kv_offload_total_bytes_total counter\n")
	for i, st := range states {
		fmt.Fprintf(b, "vllm:kv_offload_total_bytes_total{%s,transfer_type=\"cpu_to_gpu\"} %d\n", labels(i), st.loadBytes)
		fmt.Fprintf(b, "vllm:kv_offload_total_bytes_total{%s,transfer_type=\"gpu_to_cpu\"} %d\n", labels(i), st.storeBytes)
	}
	fmt.Fprintf(b, "# HELP vllm:kv_offload_cpu_cache_usage_perc CPU offload cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_offload_cpu_cache_usage_perc gauge\n")
	for i, st := range states {
		fmt.Fprintf(b, "vllm:kv_offload_cpu_cache_usage_perc{%s} %s\n", labels(i), num(st.usage))
	}
}
