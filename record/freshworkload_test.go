package record

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// promptSpy forwards to the engine and keeps the prompts of the chat requests.
type promptSpy struct {
	mu      sync.Mutex
	prompts []string
}

func (s *promptSpy) start(t *testing.T, target string) string {
	t.Helper()
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct {
				Messages []struct{ Content string } `json:"messages"`
			}
			if json.Unmarshal(body, &req) == nil && len(req.Messages) > 0 {
				s.mu.Lock()
				s.prompts = append(s.prompts, req.Messages[len(req.Messages)-1].Content)
				s.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestConsecutiveRunsSendDifferentPrompts: two runs given no seed send no prompt in
// common (before, both used seed 1 and sent the same prompts, which a server's
// prefix cache then served warm), each records the seed it drew, and a run given
// that seed sends the first run's prompts again.
func TestConsecutiveRunsSendDifferentPrompts(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	run := func(seed uint64) (map[string]bool, trace.RunInfo) {
		spy := &promptSpy{}
		o := baseOptions(t, spy.start(t, eng.URL()))
		o.Seed = seed
		o.MetricsURL = "off"
		info, err := Record(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, p := range spy.prompts {
			if strings.HasPrefix(p, "request 99999999") {
				continue // the probe request, the same in every run on purpose
			}
			set[p] = true
		}
		if len(set) < o.RequestsPerLevel {
			t.Fatalf("the spy saw %d prompts", len(set))
		}
		return set, info
	}
	first, info1 := run(0)
	second, info2 := run(0)
	if info1.Plan.Seed == 0 || info1.Plan.Seed == info2.Plan.Seed {
		t.Errorf("seeds %d and %d: want two fresh, different ones", info1.Plan.Seed, info2.Plan.Seed)
	}
	for p := range second {
		if first[p] {
			t.Errorf("the second run sent the first's prompt %.40q...", p)
		}
	}
	again, _ := run(info1.Plan.Seed)
	for p := range first {
		if !again[p] {
			t.Errorf("--seed %d did not repeat the prompt %.40q...", info1.Plan.Seed, p)
		}
	}
}

// TestLevelsShareTheirLengths: with --prompt-tokens lognormal and --output-tokens
// uniform, the k-th request of every level asks for the same lengths (common random
// numbers), while no two requests share a prompt. Before, each level drew its own
// sample (mean prompts 303, 258 and 201 tokens at c=2, 4, 8 on one run).
func TestLevelsShareTheirLengths(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Concurrency = []int{2, 4, 8}
	o.RequestsPerLevel = 24
	o.Warmup = 2
	o.PromptTokens = 0
	o.PromptLengths = "lognormal:200,0.6"
	o.OutputLengths = "uniform:2-9"
	o.MetricsURL = "off"
	o.Timeout = 10 * time.Second
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, _ := readTrace(t, o.Output)
	first := map[int32]int64{}
	for _, r := range rows {
		if f, ok := first[r.Level]; !ok || r.RequestID < f {
			first[r.Level] = r.RequestID
		}
	}
	type asked struct{ prompt, output int32 }
	byIndex := map[int64]map[int32]asked{}
	for _, r := range rows {
		k := r.RequestID - first[r.Level]
		if byIndex[k] == nil {
			byIndex[k] = map[int32]asked{}
		}
		byIndex[k][r.Level] = asked{r.TargetPromptTokens, r.MaxTokens}
	}
	distinct := map[int32]bool{}
	for k, lv := range byIndex {
		if len(lv) != 3 {
			t.Fatalf("request %d of a level is in %d levels", k, len(lv))
		}
		if lv[0] != lv[1] || lv[0] != lv[2] {
			t.Errorf("request %d of each level asks for %v: want the same lengths in every level", k, lv)
		}
		distinct[lv[0].prompt] = true
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct prompt lengths over %d requests: not drawn from the distribution", len(distinct), len(byIndex))
	}
}

func TestRecordedSeedRepeatsOnResume(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m"})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.Seed = 0
	o.Output = filepath.Join(t.TempDir(), "run.parquet")
	o.crashAfterLevels = 1
	o.MetricsURL = "off"
	info, err := Record(context.Background(), o)
	if err == nil {
		t.Fatal("the simulated crash did not stop the run")
	}
	o.crashAfterLevels = 0
	o.Resume = true
	resumed, err := Record(context.Background(), o)
	if err != nil {
		t.Fatalf("resume with no seed given: %v", err)
	}
	if resumed.Plan.Seed != info.Plan.Seed || resumed.Plan.Seed == 0 {
		t.Errorf("resumed with seed %d, the interrupted run drew %d", resumed.Plan.Seed, info.Plan.Seed)
	}
}
