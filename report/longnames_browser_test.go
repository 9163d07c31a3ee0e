package report

import (
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/internal/browsertest"
)

// longModels are model names as long as real ones get (an org, a fine-tune, a
// quantization and a date), with no space to break at.
var longModels = []string{
	"neuralmagic-ent/Meta-Llama-3.1-405B-Instruct-FP8-dynamic-speculative-eagle3-2025-03-14",
	"RedHatAI/Qwen3-235B-A22B-Instruct-2507-quantized.w4a16-kv-fp8-tp8-pp2-experimental",
}

// TestBrowserLongModelNames: a comparison report of two runs with long model names
// fits a 1,280 px window (no element wider than the page or pushed out of its box),
// and its PDF prints the headline's words whole (issue 27: the names overflowed the
// table at 1,280 px and the PDF cut the headline mid-word).
func TestBrowserLongModelNames(t *testing.T) {
	bin := browsertest.Chromium(t)
	pdftotext := browsertest.Pdftotext(t)
	a := fixtureTwo(6, 60)
	for i := range a.Runs {
		a.Runs[i].Model = longModels[i]
	}
	page := render(t, a, Options{Tool: "ceiling test"})
	dir := t.TempDir()
	file := filepath.Join(dir, "compare.html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</style>", "@page { size: A4; }</style>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := artifactDir(t)
	pdf := filepath.Join(out, "longnames-A4.pdf")
	dom := browsertest.Open(t, bin, file, browsertest.View{Width: 1280, Height: 900, Screenshot: filepath.Join(out, "longnames-desktop.png"), PDF: pdf})
	st := browsertest.Status(t, dom)
	if st["state"] != "done" {
		t.Fatalf("page state %q, errors %q", st["state"], st["errors"])
	}
	if _, ok := st["overflow"]; !ok {
		t.Fatal("the page's self-test measured no overflow")
	}
	if st["overflow"] != "" {
		t.Errorf("elements overflow at 1,280 px:\n  %s", strings.ReplaceAll(html.UnescapeString(st["overflow"]), " | ", "\n  "))
	}
	// The headlines, as printed: every word of the title and of each run's verdict
	// line is whole on the first page (a line cut at the page edge loses its end:
	// "adds little throughpu").
	heads := headingTexts(page)
	if len(heads) == 0 {
		t.Fatal("no heading on the page")
	}
	heads = append(heads[:1], verdictTexts(page)...)
	if len(heads) < 3 {
		t.Fatalf("headlines %q: want the title and both runs' verdicts", heads)
	}
	pages := browsertest.ReadPDF(t, pdftotext, pdf)
	if len(pages) == 0 {
		t.Fatal("the PDF has no page")
	}
	var first strings.Builder
	for _, l := range pages[0].Lines {
		first.WriteString(l.Text + " ")
	}
	printed := strings.Join(strings.Fields(first.String()), " ")
	joined := strings.ReplaceAll(printed, " ", "") // a name wrapped inside itself still reads whole
	for _, h := range heads {
		for _, w := range strings.Fields(h) {
			if !strings.Contains(joined, w) {
				t.Errorf("the printed first page lacks the headline word %q of %q:\n%.600s", w, h, printed)
				break
			}
		}
	}
}

var verdictRe = regexp.MustCompile(`(?s)<p class="verdict-line"[^>]*>(.*?)</p>`)

// verdictTexts are the texts of the page's verdict lines, as they print.
func verdictTexts(page string) []string {
	var out []string
	for _, m := range verdictRe.FindAllStringSubmatch(page, -1) {
		if s := strings.Join(strings.Fields(html.UnescapeString(tagRe.ReplaceAllString(m[1], ""))), " "); s != "" {
			out = append(out, s)
		}
	}
	return out
}
