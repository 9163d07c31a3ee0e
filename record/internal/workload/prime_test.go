package workload

import (
	"context"
	"strings"
	"testing"
)

// TestPrimePrompts: one priming prompt per shared prefix, each led by its prefix
// (so it loads that prefix into the cache) and unlike the run's prompts after it.
func TestPrimePrompts(t *testing.T) {
	w, err := NewSynthetic(context.Background(), Config{Seed: 7, SharedPrefix: 40, Prefixes: 3,
		Prompt: Lengths{Kind: "fixed", A: 100}, Output: Lengths{Kind: "fixed", A: 10}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	primes := w.PrimePrompts()
	if len(primes) != 3 {
		t.Fatalf("%d priming prompts for 3 prefixes", len(primes))
	}
	run, _ := w.Prompt(0, 0)
	for k, p := range primes {
		if !strings.HasPrefix(p.Text, w.prefixes[k]) {
			t.Errorf("priming prompt %d does not start with prefix %d", k, k)
		}
		if p.Text == run.Text {
			t.Errorf("priming prompt %d is a prompt of the run", k)
		}
	}
	none, err := NewSynthetic(context.Background(), Config{Seed: 7, Prompt: Lengths{Kind: "fixed", A: 100}, Output: Lengths{Kind: "fixed", A: 10}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(none.PrimePrompts()); n != 0 {
		t.Errorf("%d priming prompts without a shared prefix", n)
	}
}
