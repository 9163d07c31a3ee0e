package record

import (
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/engine"
)

// TestPrefixForHitRate: the shared prefix is the target share of the median
// prompt in whole blocks of 16 tokens, at least one block.
func TestPrefixForHitRate(t *testing.T) {
	for _, tc := range []struct {
		rate, median float64
		want         int
	}{
		{0.8, 1000, 800}, {0.5, 1000, 496}, {0.9, 2100, 1888}, {0.01, 100, 16},
	} {
		if got := prefixForHitRate(tc.rate, tc.median); got != tc.want {
			t.Errorf("rate %v of %v tokens: %d, want %d", tc.rate, tc.median, got, tc.want)
		}
	}
	o := Options{PromptTokens: 1000, PrefixHitRate: 0.8}
	if p := o.plan(); p.SharedPrefixTokens != 800 || p.PrefixHitRate != 0.8 {
		t.Errorf("plan: shared %d, target %v; want 800, 0.8", p.SharedPrefixTokens, p.PrefixHitRate)
	}
}

// TestPrefixHitRateOptions: a target outside [0, 1) or beside options it cannot
// go with is a usage error naming the field.
func TestPrefixHitRateOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *Options)
		want string
	}{
		{"one", func(o *Options) { o.PrefixHitRate = 1 }, "from 0 to below 1"},
		{"negative", func(o *Options) { o.PrefixHitRate = -0.1 }, "from 0 to below 1"},
		{"with a shared prefix", func(o *Options) { o.PrefixHitRate, o.SharedPrefixTokens = 0.5, 10 }, "not both"},
		{"with a dataset", func(o *Options) { o.PrefixHitRate, o.Dataset = 0.5, "x.jsonl" }, "Options.Dataset"},
		{"with turns", func(o *Options) { o.PrefixHitRate, o.Turns, o.Endpoint = 0.5, 3, "chat" }, "Options.Turns"},
	} {
		o := baseOptions(t, "http://127.0.0.1:1")
		tc.set(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), "Options.PrefixHitRate") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error on Options.PrefixHitRate saying %q", tc.name, err, tc.want)
		}
	}
	o := baseOptions(t, "http://127.0.0.1:1")
	o.PrefixHitRate = 0.5
	if err := o.Validate(); err != nil {
		t.Errorf("a valid target: %v", err)
	}
}

// TestCacheFlushPath: the engines whose source gives a flush endpoint.
func TestCacheFlushPath(t *testing.T) {
	for kind, want := range map[engine.Name]string{engine.VLLM: "/reset_prefix_cache", engine.SGLang: "/flush_cache", engine.LlamaCpp: "", engine.Unknown: ""} {
		if got := cacheFlushPath(kind); got != want {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
}

// TestNoFlushEndpoint: the words for an engine without a flush endpoint.
func TestNoFlushEndpoint(t *testing.T) {
	if got := noFlushEndpoint(engine.LlamaCpp); got != "ceiling knows no flush endpoint for a llama.cpp server" {
		t.Errorf("llama.cpp: %q", got)
	}
	if got := noFlushEndpoint(engine.Unknown); !strings.Contains(got, "not known") {
		t.Errorf("unknown: %q", got)
	}
}
