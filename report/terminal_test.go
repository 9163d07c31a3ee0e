package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
)

// controls acts on a terminal (OSC title, CSI clear, DEL, C1 CSI) or reorders text
// (a right-to-left override, an isolate, a mark).
const controls = "m\x1b]0;pwned\x07\x1b[2J\x7f\u009b2J\u202eexe.txt\u2066\u200f"

// Issue 31 item 2, the report's side: strings from a server or a file (a model id,
// a warning, an error group) reach the HTML with their controls written as \uXXXX
// escapes, shown as text in the page and decoded to the same data in its JSON.
func TestReportHoldsNoRawControls(t *testing.T) {
	a := fixture(4, 40)
	r := &a.Runs[0]
	r.Model = controls
	r.Warnings = append(r.Warnings, "server said "+controls)
	r.Levels[1].ErrorGroups = []analyze.ErrorGroup{{Kind: "http_500", Message: controls, Count: 1}}
	html := render(t, a, Options{Title: controls})
	for _, c := range []string{"\x1b", "\x07", "\x7f", "\u009b", "\u202e", "\u2066", "\u200f"} {
		if strings.Contains(html, c) {
			t.Errorf("the page holds the raw control %q", c)
		}
	}
	if !strings.Contains(html, `m\u001b]0;pwned`) {
		t.Error("the model id is not shown, escaped, in the page")
	}
	var back analyze.Analysis
	if err := json.Unmarshal([]byte(scriptBody(t, html, "ceiling-analysis")), &back); err != nil {
		t.Fatalf("embedded analysis is not JSON: %v", err)
	}
	want, _ := json.Marshal(a)
	got, _ := json.Marshal(&back)
	if !bytes.Equal(want, got) {
		t.Errorf("the embedded analysis differs from the input:\n got %.300s\nwant %.300s", got, want)
	}
}
