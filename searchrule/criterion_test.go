package searchrule

import (
	"strings"
	"testing"
)

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{"2s", "ttft p99 <= 2s", ""},
		{"p95:2s", "ttft p95 <= 2s", ""},
		{"p99.9:500ms, p50:100ms", "ttft p99.9 <= 500ms|ttft p50 <= 100ms", ""},
		{"P95:1s", "ttft p95 <= 1s", ""},
		{"p100:1s", "", "percentile"},
		{"95:1s", "", "percentile"},
		{"p95:", "", "duration"},
		{"p95:-1s", "", "duration"},
		{"fast", "", "duration"},
	} {
		cs, err := ParseSLO("ttft", tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSLO(%q) error %v, want …%s…", tc.in, err, tc.err)
			}
			continue
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.String())
		}
		if err != nil || strings.Join(got, "|") != tc.want {
			t.Errorf("ParseSLO(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// The errors criterion a plan stores is read back as String wrote it.
func TestStoredErrors(t *testing.T) {
	stored := []string{Criterion{Kind: "latency", Metric: "ttft", P: 99, Limit: 2}.String(), Criterion{Kind: "errors", Limit: 0.2}.String()}
	if f, ok := StoredErrors(stored); !ok || f != 0.2 {
		t.Errorf("StoredErrors(%q) = %g, %v; want 0.2, true", stored, f, ok)
	}
	if _, ok := StoredErrors(stored[:1]); ok {
		t.Errorf("StoredErrors(%q): found one where none is stored", stored[:1])
	}
}
