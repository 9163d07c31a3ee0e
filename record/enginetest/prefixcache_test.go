package enginetest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// words is n words "<tag>0 <tag>1 ...": a prompt whose tokens are all distinct.
func words(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", tag, i)
	}
	return b.String()
}

// cachedReq is a step-scheduler request of text's tokens.
func cachedReq(id int64, text string, out int) *simReq {
	r := newSimReq(id, CountTokens(text), out)
	r.ids = appendTokenIDs(nil, text)
	return r
}

// runIdle steps sim until it is idle.
func runIdle(t *testing.T, sim kvSim) {
	t.Helper()
	for i := 0; !sim.idle(); i++ {
		if i > 100_000 {
			t.Fatalf("not idle: %+v", sim.state())
		}
		sim.step()
	}
}

// TestVLLMPrefixCache checks the block pool against vLLM v1's rules: full blocks
// only, chained hashes (the same block behind another prefix misses), a full hit
// capped at num_tokens − 1, shared blocks held once, the counters, and cached
// blocks kept until an allocation needs them.
func TestVLLMPrefixCache(t *testing.T) {
	shared := words("s", 40) // 2 full blocks + 8 tokens
	t.Run("hit of full blocks, counters", func(t *testing.T) {
		sim := newVLLMSim(1024, 256, 8192, 0, true)
		a := cachedReq(0, shared+words("a", 10), 5)
		sim.add(a)
		runIdle(t, sim)
		b := cachedReq(1, shared+words("b", 10), 5)
		sim.add(b)
		runIdle(t, sim)
		if got := a.cached.Load(); got != 0 {
			t.Errorf("first request: %d cached tokens, want 0", got)
		}
		if got := b.cached.Load(); got != 32 {
			t.Errorf("second request: %d cached tokens, want 32 (2 full blocks of the 40 shared tokens)", got)
		}
		st := sim.state()
		if st.prefixQueries != 100 || st.prefixHits != 32 {
			t.Errorf("counters: queries %d, hits %d; want 100 (2 × 50 prompt tokens), 32", st.prefixQueries, st.prefixHits)
		}
	})
	t.Run("chained hashes", func(t *testing.T) {
		sim := newVLLMSim(1024, 256, 8192, 0, true)
		sim.add(cachedReq(0, words("x", 16)+words("y", 16)+words("z", 4), 2))
		runIdle(t, sim)
		// Block "y..." is cached, but behind "x...": behind another first block it misses.
		b := cachedReq(1, words("w", 16)+words("y", 16)+words("z", 4), 2)
		sim.add(b)
		runIdle(t, sim)
		if got := b.cached.Load(); got != 0 {
			t.Errorf("same second block behind another first: %d cached, want 0", got)
		}
	})
	t.Run("full hit recomputes the last block", func(t *testing.T) {
		sim := newVLLMSim(1024, 256, 8192, 0, true)
		p := words("q", 32)
		sim.add(cachedReq(0, p, 2))
		runIdle(t, sim)
		b := cachedReq(1, p, 2)
		sim.add(b)
		runIdle(t, sim)
		if got := b.cached.Load(); got != 16 {
			t.Errorf("identical 32-token prompt: %d cached, want 16 (hits stop at num_tokens − 1)", got)
		}
	})
	t.Run("shared blocks held once", func(t *testing.T) {
		sim := newVLLMSim(1024, 256, 8192, 0, true)
		long := words("s", 160) // 10 blocks
		for i := range 4 {
			sim.add(cachedReq(int64(i), long+words(fmt.Sprintf("u%d-", i), 16), 50))
		}
		sim.step() // all four admitted in one step: the later ones hit the first's blocks
		st := sim.state()
		// 10 shared blocks + 1 own block each (the first output token is not computed yet).
		if want := (10 + 4) * blockSize; st.usedTokens != want {
			t.Errorf("4 requests of 160 shared + 16 own tokens hold %d tokens, want %d", st.usedTokens, want)
		}
		runIdle(t, sim)
	})
	t.Run("LRU eviction only when needed", func(t *testing.T) {
		sim := newVLLMSim(64*blockSize, 256, 8192, 0, true)
		old := cachedReq(0, words("old", 32*blockSize), 1)
		sim.add(old)
		runIdle(t, sim)
		// 32 free blocks plus 32 cached: a request of 30 blocks takes the empty ones first.
		sim.add(cachedReq(1, words("mid", 30*blockSize), 1))
		runIdle(t, sim)
		again := cachedReq(2, words("old", 32*blockSize), 1)
		sim.add(again)
		runIdle(t, sim)
		if got := again.cached.Load(); got != 31*blockSize {
			t.Errorf("old prefix after a request that fit in the empty blocks: %d cached, want %d", got, 31*blockSize)
		}
		// A request of 60 blocks needs the cached ones: the old prefix is evicted.
		sim.add(cachedReq(3, words("big", 60*blockSize), 1))
		runIdle(t, sim)
		last := cachedReq(4, words("old", 32*blockSize), 1)
		sim.add(last)
		runIdle(t, sim)
		if got := last.cached.Load(); got >= 31*blockSize {
			t.Errorf("old prefix after a request that needed its blocks: %d cached, want it evicted", got)
		}
	})
	t.Run("reset refused while blocks are in use", func(t *testing.T) {
		sim := newVLLMSim(1024, 256, 8192, 0, true)
		sim.add(cachedReq(0, shared, 50))
		sim.step()
		if sim.resetPrefixCache() {
			t.Error("reset while a request runs: accepted, want refused")
		}
		runIdle(t, sim)
		if !sim.resetPrefixCache() {
			t.Error("reset when idle: refused")
		}
		b := cachedReq(1, shared, 2)
		sim.add(b)
		runIdle(t, sim)
		if got := b.cached.Load(); got != 0 {
			t.Errorf("after a reset: %d cached, want 0", got)
		}
	})
}

// TestSGLangRadixCache checks the radix cache against SGLang's: token-granular
// matches, shared tokens held once, LRU eviction of unlocked leaves, and a flush
// refused while requests run.
func TestSGLangRadixCache(t *testing.T) {
	shared := words("s", 37)
	t.Run("token-granular hit", func(t *testing.T) {
		sim := newSGLangSim(1000, 4096, 8192, true)
		sim.add(cachedReq(0, shared+words("a", 5), 3))
		runIdle(t, sim)
		b := cachedReq(1, shared+words("b", 5), 3)
		sim.add(b)
		runIdle(t, sim)
		if got := b.cached.Load(); got != 37 {
			t.Errorf("second request: %d cached tokens, want 37 (page size 1)", got)
		}
		if st := sim.state(); st.hitRate != 37.0/42 {
			t.Errorf("cache_hit_rate %v, want 37/42", st.hitRate)
		}
	})
	t.Run("shared tokens held once", func(t *testing.T) {
		sim := newSGLangSim(1000, 4096, 8192, true)
		sim.add(cachedReq(0, shared+words("a", 5), 30))
		sim.step() // prefilled: the prompt is in the tree
		sim.add(cachedReq(1, shared+words("b", 5), 30))
		sim.step() // a decode step or the second prefill
		sim.step()
		st := sim.state()
		if st.running != 2 || st.usedTokens > 37+2*5+2*3 {
			t.Errorf("two requests sharing 37 tokens: %d running, %d tokens held; want 2 running, at most %d", st.running, st.usedTokens, 37+2*5+2*3)
		}
		runIdle(t, sim)
	})
	t.Run("LRU eviction of unlocked leaves", func(t *testing.T) {
		sim := newSGLangSim(300, 4096, 8192, true)
		first := words("f", 100)
		sim.add(cachedReq(0, first, 1))
		runIdle(t, sim)
		sim.add(cachedReq(1, words("g", 100), 1))
		runIdle(t, sim)
		// 200 cached tokens of 300: a request of 150 evicts the older leaf only.
		sim.add(cachedReq(2, words("h", 150), 1))
		runIdle(t, sim)
		f := cachedReq(3, first, 1)
		sim.add(f)
		g := cachedReq(4, words("g", 100), 1)
		sim.add(g)
		runIdle(t, sim)
		if f.cached.Load() != 0 || g.cached.Load() != 99 {
			t.Errorf("after eviction: oldest prefix %d cached (want 0, evicted), newer %d (want 99, kept)", f.cached.Load(), g.cached.Load())
		}
	})
	t.Run("flush refused while requests run", func(t *testing.T) {
		sim := newSGLangSim(1000, 4096, 8192, true)
		sim.add(cachedReq(0, shared, 20))
		sim.step()
		if sim.resetPrefixCache() {
			t.Error("flush while a request runs: accepted, want refused")
		}
		runIdle(t, sim)
		if !sim.resetPrefixCache() {
			t.Error("flush when idle: refused")
		}
		if st := sim.state(); st.usedTokens != 0 {
			t.Errorf("after a flush: %d tokens held", st.usedTokens)
		}
	})
}

// TestPrefixCacheHTTP: over HTTP, a request behind a cached prefix reports
// cached_tokens in its usage, /metrics shows the engine's counters, and the
// cache-dropping endpoints answer as the real servers do.
func TestPrefixCacheHTTP(t *testing.T) {
	shared := words("s", 64)
	for _, tc := range []struct {
		sched, path string
		wantCached  int
	}{
		{SchedulerVLLM, "/reset_prefix_cache", 64},
		{SchedulerSGLang, "/flush_cache", 64},
	} {
		s := New(fast(Config{Scheduler: tc.sched, KVTokens: 4096}))
		concurrentStreams(t, s, 1, chatBody(shared+"first", 5))
		res := concurrentStreams(t, s, 1, chatBody(shared+"second", 5))
		if res[0].cached != tc.wantCached {
			t.Errorf("%s: usage cached_tokens %d, want %d", tc.sched, res[0].cached, tc.wantCached)
		}
		m := get(t, s.URL()+"/metrics")
		switch tc.sched {
		case SchedulerVLLM:
			if q, h := metricValue(t, m, "vllm:prefix_cache_queries_total"), metricValue(t, m, "vllm:prefix_cache_hits_total"); q != 130 || h != 64 {
				t.Errorf("vLLM counters: queries %v, hits %v; want 130, 64", q, h)
			}
		case SchedulerSGLang:
			if v := metricValue(t, m, "sglang:cache_hit_rate"); v != 64.0/65 {
				t.Errorf("sglang:cache_hit_rate %v, want 64/65", v)
			}
		}
		resp, err := http.Post(s.URL()+tc.path, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: POST %s on an idle engine: %d, want 200", tc.sched, tc.path, resp.StatusCode)
		}
		res = concurrentStreams(t, s, 1, chatBody(shared+"third", 5))
		if res[0].cached != 0 {
			t.Errorf("%s: after %s: %d cached tokens, want 0", tc.sched, tc.path, res[0].cached)
		}
		s.Close()
	}
}

// TestFlushRefusedWhileRunning: SGLang answers 400 to /flush_cache while a request
// runs; vLLM answers 200 to /reset_prefix_cache but keeps its cache.
func TestFlushRefusedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		sched, path string
		status      int
	}{
		{SchedulerSGLang, "/flush_cache", http.StatusBadRequest},
		{SchedulerVLLM, "/reset_prefix_cache", http.StatusOK},
	} {
		cfg := Config{Scheduler: tc.sched, KVTokens: 4096, StepTime: 20 * time.Millisecond}
		s := New(cfg)
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp := post(t, s.URL(), "/v1/chat/completions", chatBody(words("r", 40), 20))
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
		for s.Running() == 0 {
			time.Sleep(time.Millisecond)
		}
		resp, err := http.Post(s.URL()+tc.path, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s while running: %d, want %d", tc.path, resp.StatusCode, tc.status)
		}
		<-done
		s.Close()
	}
}
