package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// unitRe is an axis name that ends with its unit in parentheses: "TTFT (s)".
var unitRe = regexp.MustCompile(`\(([^()]+)\)$`)

// TestAxisUnits checks every chart of every report kind: each value axis is named
// with its unit, each category axis is named or labels its categories.
func TestAxisUnits(t *testing.T) {
	for name, a := range map[string]*analyze.Analysis{
		"one": fixture(10, 500), "two": fixtureTwo(5, 40), "rate": fixtureRate(), "errors": fixtureErrors(), "nulls": fixtureEmpty(3),
	} {
		html := render(t, a, Options{})
		var specs []chartSpec
		if err := json.Unmarshal([]byte(scriptBody(t, html, "ceiling-charts")), &specs); err != nil {
			t.Fatal(err)
		}
		for _, s := range specs {
			var o map[string]any
			if err := json.Unmarshal(s.Option, &o); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"xAxis", "yAxis"} {
				for _, ax := range all(o[key]) {
					n, _ := ax["name"].(string)
					switch ax["type"] {
					case "category":
						if lbl, _ := ax["axisLabel"].(map[string]any); n == "" && lbl != nil && lbl["show"] == false {
							t.Errorf("%s %s: category %s has neither a name nor labels", name, s.ID, key)
						}
					default:
						if !unitRe.MatchString(n) {
							t.Errorf("%s %s: %s %q does not end with its unit in parentheses", name, s.ID, key, n)
						}
					}
				}
			}
		}
	}
}

func TestMetricUnit(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"rate(llamacpp:tokens_predicted_total)", "Rate (tokens/s)"},
		{"rate(vllm:generation_tokens_total)", "Rate (tokens/s)"},
		{"rate(llamacpp:tokens_predicted_seconds_total)", "Busy time per second (s/s)"},
		{"vllm:gpu_cache_usage_perc", "Fraction used (0–1)"},
		{"vllm:num_requests_running", "Requests (count)"},
		{"llamacpp:requests_deferred", "Requests (count)"},
		{"something_else", "Value (as scraped)"},
	} {
		if got := metricUnit(tt.name); got != tt.want {
			t.Errorf("metricUnit(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVerticalMarks checks the ceiling marks: ceilings at one concurrency become one
// line with one label, one beyond the axis is drawn at its end with an arrow, and
// successive labels alternate ends.
func TestVerticalMarks(t *testing.T) {
	ax := axis{log: true, min: 1, max: 16, top: 16}
	got := verticalMarks([]mark{
		{x: 4, text: "ceiling 4 (server batch)", color: "#B00020", solid: true},
		{x: 4, text: "knee 4", color: "#555555"},
		{x: 300, text: "KV 300", color: "#7B3294"},
		{x: 2, text: "SLO 2", color: "#C2185B"},
	}, ax)
	type line struct {
		x         float64
		text, pos string
	}
	var lines []line
	for _, l := range got {
		lines = append(lines, line{*l.XAxis, l.Name, l.Label.Position})
	}
	want := []line{
		{2, "SLO 2", "insideEndTop"},
		{4, "ceiling 4 (server batch) · knee 4", "insideStartTop"},
		{16, "KV 300 → (beyond the axis)", "insideEndTop"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %+v, want %+v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, lines[i], want[i])
		}
	}
	if got[1].LineStyle.Type != "solid" {
		t.Errorf("the merged line holds the realistic ceiling: want it solid, got %q", got[1].LineStyle.Type)
	}
	// A ceiling past the sweep but within reach extends the axis instead.
	r := analyze.Run{Levels: []analyze.Level{{Concurrency: 1}, {Concurrency: 16}}, Ceilings: analyze.Ceilings{KV: f64(21.3)}}
	if a := sweepAxis([]analyze.Run{r}).reaching([]analyze.Run{r}); a.top != 21.3 || a.beyond(21.3) {
		t.Errorf("axis top %v, want 21.3 (the KV ceiling)", a.top)
	}
	if !strings.Contains(sweepAxis([]analyze.Run{r}).name, "(requests in flight, log₂ scale)") {
		t.Errorf("axis name %q lacks its unit", sweepAxis([]analyze.Run{r}).name)
	}
}
