package analyze

import (
	"context"
	"testing"
)

// TestNoCompletionsHasNoInterval: a level where every request failed has no
// interval: null in the JSON, never 0.0–0.0 as if its 0 tok/s were measured to
// that precision (analysistext's TestNoCompletionsIntervalRow: "—" in the text).
func TestNoCompletionsHasNoInterval(t *testing.T) {
	var rows = knownRows()[:0]
	for _, r := range knownRows() {
		if r.Level == 1 && r.Error == nil {
			continue // level 1 keeps only its two failures
		}
		rows = append(rows, r)
	}
	a, err := Analyze(context.Background(), []string{writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), rows)}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	l := a.Runs[0].Levels[1]
	if l.Level != 1 || l.Requests != l.Errors || l.CI == nil {
		t.Fatalf("level %+v: want level 1 with every request failed, and a CI record", l)
	}
	if c := l.CI; c.OutputTokS != nil || c.RequestS != nil {
		t.Errorf("intervals of a level without a completion: tok/s %+v, req/s %+v; want none", c.OutputTokS, c.RequestS)
	}
}
