package record

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/realserver"
)

// Issue 24 on a real llama.cpp server (the d64 test model on the CPU).

// TestLlamaCppDefaultLevelSizeIsValid records c=1 and c=2 at the default level size
// (30 s of steady state) with requests of about 4 seconds: the d768 model, whose
// speed on this machine is measured first and max_tokens (with ignore_eos) set to
// make a request last about 4 s. Both levels are valid by analyze's rule. Before
// the one rule, the recorder stopped c=1 after 30 s and 4 requests per worker,
// about 7 completions of 4-second requests, where analyze needs 8.
func TestLlamaCppDefaultLevelSizeIsValid(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real llama-server and records for about 2 minutes")
	}
	server, _ := llamaTool(t)
	url := startLlamaModel(t, server, llamaModel(t, "d768"), 2, 4096)
	maxTokens := tokensFor(t, url, 4*time.Second)
	o := Options{URL: url, Concurrency: []int{1, 2}, PromptTokens: 32, OutputTokens: maxTokens, IgnoreEOS: true,
		Output: filepath.Join(t.TempDir(), "sized.parquet"), Timeout: 2 * time.Minute, Version: "test"}
	info, err := Record(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, lv := range a.Runs[0].Levels {
		li := info.Levels[i]
		t.Logf("c=%d: level ran %.1f s, %d completions in a %.1f s window, E2E p50 %.2f s, in flight %.2f",
			lv.Concurrency, li.Ended.Sub(li.Started).Seconds(), lv.WindowCompletions, lv.WindowS, *lv.E2E.P50, lv.InFlight)
		if !lv.Valid {
			t.Errorf("default-sized level c=%d is invalid: %s", lv.Concurrency, lv.InvalidReason)
		}
	}
	for _, w := range a.Runs[0].Warnings {
		if strings.Contains(w, "invalid") {
			t.Errorf("warning: %s", w)
		}
	}
}

// TestLlamaCppPreflightRefusesOverTheSlotContext: llama-server -c 512 -np 4 gives
// each slot a small context (/props n_ctx: 128, which llama.cpp rounds up to 256);
// a workload of a longer prompt is refused before any request,
// naming the per-slot context and the fix. Before, the recorder sent thousands of
// requests, each an HTTP 400 "request (256 tokens) exceeds the available context
// size (128 tokens)".
func TestLlamaCppPreflightRefusesOverTheSlotContext(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real llama-server")
	}
	url := startLlama(t, 4, 512)
	resp, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	err = json.NewDecoder(resp.Body).Decode(&props)
	resp.Body.Close()
	nctx := props.Settings.NCtx
	if err != nil || nctx <= 0 || nctx > 512 {
		t.Fatalf("/props n_ctx %d (%v): want the per-slot context of -c 512 -np 4", nctx, err)
	}
	t.Logf("-c 512 -np 4: n_ctx per slot %d", nctx)
	o := Options{URL: url, Concurrency: []int{1, 2}, PromptTokens: nctx + 128, OutputTokens: 128,
		Output: filepath.Join(t.TempDir(), "refused.parquet"), Timeout: 30 * time.Second, Version: "test"}
	_, err = Record(context.Background(), o)
	if err == nil {
		t.Fatal("the workload was not refused")
	}
	t.Log(err)
	for _, w := range []string{"does not fit the server's context", fmt.Sprintf("%d tokens a llama.cpp slot holds (n_ctx per slot, 4 slots)", nctx),
		"be refused (HTTP 400", "nothing was sent", "larger -c or fewer -np"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal lacks %q", w)
		}
	}
	resp, herr := http.Get(url + "/metrics")
	if herr != nil {
		t.Fatal(herr)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "llamacpp:prompt_tokens_total") && strings.TrimSpace(strings.TrimPrefix(line, "llamacpp:prompt_tokens_total")) != "0" {
			t.Errorf("the server processed prompts before the refusal: %s", line)
		}
	}
}

// TestLlamaCppRepeatedSeedWarmCacheIsWarned: a run repeated with the same --seed
// against the same llama-server finds its prompts in the prompt cache; analyze
// warns, naming the level. A run with a fresh seed on the same server does not.
func TestLlamaCppRepeatedSeedWarmCacheIsWarned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real llama-server")
	}
	url := startLlama(t, 4, 8192)
	dir := t.TempDir()
	rec := func(name string, seed uint64) []string {
		o := Options{URL: url, Concurrency: []int{1}, RequestsPerLevel: 6, PromptTokens: 400, OutputTokens: 4, IgnoreEOS: true,
			Output: filepath.Join(dir, name+".parquet"), Timeout: 60 * time.Second, Seed: seed, Version: "test"}
		info, err := Record(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lv := a.Runs[0].Levels[0]
		if lv.Workload != nil && lv.Workload.PrefixHitShare != nil {
			t.Logf("%s (seed %d): prefix-hit share %.3f, TTFT p50 %.3f s", name, info.Plan.Seed, *lv.Workload.PrefixHitShare, *lv.TTFT.P50)
		}
		var cached []string
		for _, w := range a.Runs[0].Warnings {
			if strings.Contains(w, "prefix cache") {
				cached = append(cached, w)
			}
		}
		return cached
	}
	if w := rec("first", 0); len(w) != 0 {
		t.Errorf("first run warned: %q", w)
	}
	first := rec("seeded", 77)
	if len(first) != 0 {
		t.Errorf("a fresh seed's run warned: %q", first)
	}
	again := rec("repeat", 77)
	if len(again) != 1 || !strings.Contains(again[0], "level 0 (concurrency 1)") || !strings.Contains(again[0], "seed 77") {
		t.Errorf("the repeat with seed 77 gave warnings %q, want one naming level 0 and the seed", again)
	}
}

// llamaModel is the path of test model name (d64, d768), as .ci/llama.sh made it,
// from the environment (realserver.ModelPath): a test never builds one.
func llamaModel(t *testing.T, name string) string {
	t.Helper()
	return realserver.ModelPath(t, name)
}

// tokensFor measures the server's decode speed with one request and returns the
// max_tokens that makes a request last about d (within the model's 2048 context).
func tokensFor(t *testing.T, url string, d time.Duration) int {
	t.Helper()
	const probe = 16
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"hello"}],"max_tokens":%d,"ignore_eos":true}`, probe)
	start := time.Now()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	per := time.Since(start) / probe
	n := min(max(int(d/per), 4), 1500)
	t.Logf("%v per token: max_tokens %d for %v requests", per, n, d)
	return n
}
