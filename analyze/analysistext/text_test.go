package analysistext

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// knownJSON is the analysis of analyze's known trace, as package analyze's golden
// JSON holds it (its TestAnalysisGolden computes it from the trace): the input of
// these renderers' goldens, so that the chain trace → analysis → text is tested
// link by link and the text is a rendering of the JSON data alone.
var knownJSON = filepath.Join("..", "testdata", "known.json")

// known decodes knownJSON.
func known(t *testing.T) *analyze.Analysis {
	t.Helper()
	data, err := os.ReadFile(knownJSON)
	if err != nil {
		t.Fatal(err)
	}
	var a analyze.Analysis
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("%s: %v", knownJSON, err)
	}
	return &a
}

// TestFormatsGolden prints the known analysis in every format and compares with
// testdata/known.{txt,md} and, for JSON, with the analysis it read: the JSON
// output is the Analysis unchanged. Run `go test ./analyze/analysistext -run
// Golden -update` after an intended change and review the diff.
func TestFormatsGolden(t *testing.T) {
	for _, tc := range []struct{ format, golden string }{
		{FormatText, filepath.Join("testdata", "known.txt")},
		{FormatMarkdown, filepath.Join("testdata", "known.md")},
		{FormatJSON, knownJSON}, // analyze's golden: -update does not rewrite it
	} {
		t.Run(tc.format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, known(t), tc.format); err != nil {
				t.Fatal(err)
			}
			if *update && tc.format != FormatJSON {
				if err := os.WriteFile(tc.golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s output differs from %s (run with -update and review the diff):\n%s", tc.format, tc.golden, buf.String())
			}
		})
	}
}

// twoRuns is the known analysis with a second run beside it: run-b from b.parquet.
func twoRuns(t *testing.T) *analyze.Analysis {
	a, b := known(t), known(t)
	b.Runs[0].RunID, b.Runs[0].Source = "run-b", "b.parquet"
	a.Runs = append(a.Runs, b.Runs[0])
	return a
}

func TestSeveralRunsSideBySide(t *testing.T) {
	a := twoRuns(t)
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
	a := known(t)
	a.Runs[0].Model = "evil|model\nname"
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
	a := twoRuns(t) // two runs: the comparison table too
	server, err := json.Marshal(map[string]string{"kind": "llamacpp", "version": "<!--"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Runs {
		a.Runs[i].Model, a.Runs[i].Server, a.Runs[i].RunID = hostile, server, "run-a"
	}
	a.Runs[1].Source = "b|<!--.parquet"
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
		`b\|\<\!--.parquet`,
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
	a := known(t)
	a.Runs[0].Model = "a\x1b[2Jb\nc\td"
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
