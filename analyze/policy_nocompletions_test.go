package analyze

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestNoCompletionsHasNoInterval: a level where every request failed has no
// interval: null in the JSON and "—" in the text's interval table, never 0.0–0.0
// as if its 0 tok/s were measured to that precision.
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
	var buf bytes.Buffer
	if err := Write(&buf, a, FormatText); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	_, after, ok := strings.Cut(text, "Confidence intervals")
	if !ok {
		t.Fatalf("no interval table:\n%s", text)
	}
	table, _, _ := strings.Cut(after, "too short:")
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "1" {
			if strings.Contains(line, "0.0–0.0") || strings.Contains(line, "too short") || f[2] != "—" {
				t.Errorf("level 1's intervals: %q; want —", line)
			}
			return
		}
	}
	t.Errorf("level 1 missing from the interval table:\n%s", table)
}
