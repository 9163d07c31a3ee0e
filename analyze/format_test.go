package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestFormatsGolden prints the known trace's analysis in every format and compares
// with testdata/known.{txt,md,json}. Run `go test ./analyze -run Golden -update` after
// an intended change and review the diff.
func TestFormatsGolden(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{SLO: SLO{TTFT: ptr(0.1)}, TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	a.Runs[0].Source = "run.parquet" // not the temporary directory
	for _, tc := range []struct{ format, golden string }{
		{FormatText, "known.txt"},
		{FormatMarkdown, "known.md"},
		{FormatJSON, "known.json"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, a, tc.format); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s output differs from %s (run with -update and review the diff):\n%s", tc.format, golden, buf.String())
			}
		})
	}
}

// TestJSONIsTheAnalysis checks that --format json is exactly the Analysis value: it
// decodes back into an equal value, with the documented keys and nulls.
func TestJSONIsTheAnalysis(t *testing.T) {
	path := writeTrace(t, t.TempDir(), "run.parquet", knownInfo(), knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var back Analysis
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	first, _ := json.Marshal(a)
	if !bytes.Equal(first, again) {
		t.Errorf("JSON does not round-trip:\n%s\n%s", first, again)
	}
	var raw map[string]any
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw["schema"] != Schema {
		t.Errorf("schema = %v", raw["schema"])
	}
	lv := raw["runs"].([]any)[0].(map[string]any)["levels"].([]any)[0].(map[string]any)
	for _, k := range []string{"level", "concurrency", "rate", "requests", "errors", "window_s", "output_tok_s",
		"naive_output_tok_s", "request_s", "goodput_request_s", "decode_concurrency", "waiting_concurrency",
		"ttft_s", "ttfc_s", "tpot_s", "itl_s", "e2e_s"} {
		if _, ok := lv[k]; !ok {
			t.Errorf("level JSON lacks %q", k)
		}
	}
	if lv["goodput_request_s"] != nil {
		t.Errorf("goodput without SLOs = %v, want null", lv["goodput_request_s"])
	}
}

func TestSeveralRunsSideBySide(t *testing.T) {
	dir := t.TempDir()
	p1 := writeTrace(t, dir, "a.parquet", knownInfo(), knownRows())
	info := knownInfo()
	info.RunID = "run-b"
	rows := knownRows()
	for i := range rows {
		rows[i].RunID = "run-b"
	}
	p2 := writeTrace(t, dir, "b.parquet", info, rows)
	a, err := Analyze(context.Background(), []string{p1, p2}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FormatText, FormatMarkdown} {
		var buf bytes.Buffer
		if err := Write(&buf, a, f); err != nil {
			t.Fatal(err)
		}
		s := buf.String()
		if !strings.Contains(s, "Runs compared") || !strings.Contains(s, "run-a") || !strings.Contains(s, "run-b") {
			t.Errorf("%s output lacks the comparison of both runs:\n%s", f, s)
		}
	}
	if err := Write(&bytes.Buffer{}, a, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestMarkdownEscapesServerText(t *testing.T) {
	info := knownInfo()
	info.Target.Model = "evil|model\nname"
	path := writeTrace(t, t.TempDir(), "run.parquet", info, knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `evil\|model name`) {
		t.Errorf("model name not escaped:\n%s", buf.String())
	}
}
