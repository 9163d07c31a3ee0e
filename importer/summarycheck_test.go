package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 31 item 13: InferenceX summary points get the per-request importers'
// value checks: a point with a concurrency of 1e15, a throughput of 1e308 or −5
// tok/s, a TTFT of −1 s or tp −4 is left out with a warning naming the file, the
// point and the field; the possible point is kept; a file of impossible points
// only is refused. Before, every one was shown beside the run.
func TestHostileSummaryPointsLeftOut(t *testing.T) {
	good := `{"hw": "h100", "tp": 1, "conc": 8, "model": "m", "output_tput_per_gpu": 900, "median_ttft": 0.25, "median_tpot": 0.01}`
	hostile := []struct{ point, want string }{
		{`{"hw": "h100", "tp": 1, "conc": 1e15, "output_tput_per_gpu": 900}`, "concurrency 1e+15 is out of range"},
		{`{"hw": "h100", "tp": 1, "conc": 8, "output_tput_per_gpu": 1e308}`, "output tok/s per GPU 1e+308"},
		{`{"hw": "h100", "tp": 1, "conc": 8, "output_tput_per_gpu": -5}`, "output tok/s per GPU -5"},
		{`{"hw": "h100", "tp": 1, "conc": 8, "output_tput_per_gpu": 900, "median_ttft": -1}`, "ttft p50 -1 s"},
		{`{"hw": "h100", "tp": -4, "conc": 8, "output_tput_per_gpu": 900}`, "GPU count (tp) -4"},
		{`{"hw": "h100", "tp": 1, "conc": 8, "output_tput_per_gpu": 900, "p99_tpot": 1e300}`, "tpot p99 1e+300 s"},
	}
	points := []string{good}
	for _, h := range hostile {
		points = append(points, h.point)
	}
	path := filepath.Join(t.TempDir(), "agg.json")
	if err := os.WriteFile(path, []byte("["+strings.Join(points, ",\n")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 1 || s.Points[0].Concurrency != 8 || *s.Points[0].OutputTokSPerGPU != 900 {
		t.Fatalf("points kept %+v, want the one possible point", s.Points)
	}
	if len(s.Warnings) != len(hostile) {
		t.Errorf("%d warnings, want %d: %q", len(s.Warnings), len(hostile), s.Warnings)
	}
	for i, h := range hostile {
		if i >= len(s.Warnings) {
			break
		}
		w := s.Warnings[i]
		if !strings.Contains(w, path) || !strings.Contains(w, "agg.json element "+string(rune('1'+i))) || !strings.Contains(w, h.want) {
			t.Errorf("warning %q, want the file, element %d and %q", w, i+1, h.want)
		}
	}

	only := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(only, []byte("["+hostile[0].point+","+hostile[1].point+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(only); err == nil || !strings.Contains(err.Error(), only) || !strings.Contains(err.Error(), "every summary point has an impossible value") {
		t.Errorf("a file of impossible points: %v, want a refusal naming it", err)
	}
}
