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

// Issue 8 item 18: every server- or user-supplied string in --format markdown is
// escaped, so that a hostile model name, version or error text cannot inject HTML
// (<script>), hide the rest of the document (an unclosed <!--), open code spans
// (backticks), split a table (|) or start a heading or list (newlines).
func TestMarkdownEscapesHostileStrings(t *testing.T) {
	hostile := "<script>alert(1)</script> `code` a|b <!-- hidden\n# heading\r*x* _y_ [l](http://e) &lt; \x1b[2J"
	info := knownInfo()
	info.Target.Model = hostile
	info.Server.Version = "<!--"
	info.RunID = "run-a"
	dir := t.TempDir()
	path := writeTrace(t, dir, "run.parquet", info, knownRows())
	other := writeTrace(t, dir, "b|<!--.parquet", info, knownRows()) // two runs: the comparison table too
	a, err := Analyze(context.Background(), []string{path, other}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	a.Runs[0].Warnings = append(a.Runs[0].Warnings, "server said: "+hostile)
	var buf bytes.Buffer
	if err := Write(&buf, a, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	// What the hostile text may not do anywhere in the document.
	for i := 0; i < len(md); i++ {
		switch md[i] {
		case '<', '`', '*', '_', '[', ']', '&', '\x1b':
			if i == 0 || md[i-1] != '\\' {
				t.Fatalf("unescaped %q at %d: ...%s...", md[i], i, md[max(0, i-40):min(len(md), i+40)])
			}
		}
	}
	cells := func(row string) int { return strings.Count(row, "|") - strings.Count(row, `\|`) }
	head := -1
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "heading") && !strings.Contains(line, "script") {
			t.Errorf("the hostile newline split a line: %q", line)
		}
		if strings.HasPrefix(line, "| run |") {
			head = cells(line)
		}
		if strings.HasPrefix(line, "|") && strings.Contains(line, "script") && cells(line) != head {
			t.Errorf("a comparison row has %d cell borders, its header %d: %q", cells(line), head, line)
		}
	}
	for _, want := range []string{
		`\<script\>alert(1)\</script\> \` + "`code\\`" + ` a\|b \<\!-- hidden \# heading \*x\* \_y\_ \[l\](http://e) \&lt; `,
		`server: llamacpp \<\!--`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks the escaped %q:\n%s", want, md)
		}
	}
}

// A terminal escape sequence or a newline in a server string cannot rewrite or
// split the text output either (a neighbour of item 18): control characters become
// visible escapes (\x1b), line breaks and tabs spaces.
func TestTextOutputNeutralizesControlCharacters(t *testing.T) {
	info := knownInfo()
	info.Target.Model = "a\x1b[2Jb\nc\td"
	path := writeTrace(t, t.TempDir(), "run.parquet", info, knownRows())
	a, err := Analyze(context.Background(), []string{path}, Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	a.Runs[0].Warnings = append(a.Runs[0].Warnings, "server said \x1b]0;pwned\x07")
	var buf bytes.Buffer
	if err := Write(&buf, a, FormatText); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `model: a\x1b[2Jb c d`+"\n") {
		t.Errorf("control characters reached the text output:\n%q", out)
	}
}
