package enginetest

import (
	"testing"
	"time"
)

// TestNoiseSlowsBySpan: each span's slowdown lies in [1, 1+Noise), one seed gives
// the same slowdowns, spans differ, and no noise leaves durations alone.
func TestNoiseSlowsBySpan(t *testing.T) {
	start := time.Now().Add(-time.Hour)
	c := Config{Noise: 0.3, NoisePeriod: time.Second, NoiseSeed: 7, started: start}
	seen := map[time.Duration]bool{}
	for k := range 200 {
		c.started = start.Add(-time.Duration(k) * time.Second)
		d := c.slowed(time.Second)
		if d < time.Second || d >= 1300*time.Millisecond {
			t.Fatalf("span %d: %v outside [1s, 1.3s)", k, d)
		}
		seen[d.Round(10*time.Millisecond)] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct slowdowns over 200 spans", len(seen))
	}
	a := Config{Noise: 0.3, NoisePeriod: time.Second, NoiseSeed: 7, started: start}
	b := a
	if a.slowed(time.Second) != b.slowed(time.Second) {
		t.Error("one seed, one span: two slowdowns")
	}
	if d := (&Config{started: start}).slowed(time.Second); d != time.Second {
		t.Errorf("no noise: %v", d)
	}
	if _, err := Start(Config{Noise: -1}); err == nil {
		t.Error("a negative Noise was accepted")
	}
}
