package report

import (
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/browsertest"
)

// screenshotPNG is the README's picture (docs/report-first-screen.png) of a report's first screen, rewritten by
// TestBrowserLayout -update from the bundled real sample.
const screenshotPNG = "../docs/report-first-screen.png"

// artifactDir is where the layout test leaves its screenshots and PDFs for people
// (and CI) to look at: $CEILING_ARTIFACTS/report, else artifacts/report at the
// repository root (ignored by git).
func artifactDir(t *testing.T) string {
	dir := os.Getenv("CEILING_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	dir = filepath.Join(dir, "report")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sampleAnalysis analyzes the bundled real sample (a llama.cpp sweep with its
// server metrics sidecar).
func sampleAnalysis(t *testing.T) *analyze.Analysis {
	t.Helper()
	a, err := analyze.Analyze(context.Background(), []string{"../samples/llamacpp-d768-4slots.parquet"}, analyze.Options{TimelineLevel: -1})
	if err != nil {
		t.Fatalf("analyzing the sample: %v", err)
	}
	return a
}

// paper is a print size: its name for @page and its printable width in CSS pixels
// (the 12 mm margins of page.css off each side).
type paper struct {
	name  string
	width int
}

var papers = []paper{{"A4", 702}, {"letter", 725}} // (210 − 24) mm and (215.9 − 24) mm at 96 px/in

// TestBrowserLayout opens every kind of report in Chromium at a desktop and a
// phone width and checks what a reviewer would see: no two chart labels overlap, no
// label leaves its chart, on screen or in the print copy; then prints each to PDF on
// A4 and Letter and checks that no heading is stranded at the bottom of a page, that
// the first page is not half blank, that no text is set below 8 pt, and that no word
// of the PDF (read back with pdftotext) is under 7 pt tall on paper.
func TestBrowserLayout(t *testing.T) {
	bin := browsertest.Chromium(t)
	pdftotext := browsertest.Pdftotext(t)
	out := artifactDir(t)
	kinds := []struct {
		name string
		a    func(t *testing.T) *analyze.Analysis
	}{
		{"single", func(*testing.T) *analyze.Analysis { return fixture(10, 500) }},
		{"compare", func(*testing.T) *analyze.Analysis { return fixtureTwo(10, 200) }},
		{"rate", func(*testing.T) *analyze.Analysis { return fixtureRate() }},
		{"errors", func(*testing.T) *analyze.Analysis { return fixtureErrors() }},
		{"metrics", sampleAnalysis},
	}
	views := []struct {
		name          string
		width, height int
		paper         paper
	}{
		{"desktop", 1280, 900, papers[0]},
		{"narrow", 390, 844, papers[1]},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			a := k.a(t)
			page := render(t, a, Options{Title: "", Tool: "ceiling test"})
			dir := t.TempDir()
			headings := headingTexts(page)
			for _, v := range views {
				// The paper size is the printer's; the test sets it as a printer would.
				html := strings.Replace(page, "</style>", "@page { size: "+v.paper.name+"; }</style>", 1)
				file := filepath.Join(dir, v.name+".html")
				if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
					t.Fatal(err)
				}
				shot := filepath.Join(out, k.name+"-"+v.name+".png")
				pdf := filepath.Join(out, k.name+"-"+v.paper.name+".pdf")
				dom := browsertest.Open(t, bin, file, browsertest.View{Width: v.width, Height: v.height, Screenshot: shot, PDF: pdf})
				st := checkPage(t, v.name, dom)
				if n, _ := strconv.Atoi(st["labels"]); n < 50 {
					t.Errorf("%s: only %d chart labels measured: the check saw nothing", v.name, n)
				}
				pages := browsertest.ReadPDF(t, pdftotext, pdf)
				checkPrint(t, v.paper.name, pages, headings)
				checkPrintedHeaders(t, v.paper.name, pages)
				if k.name == "metrics" && v.name == "desktop" && *update {
					if err := copyFile(shot, screenshotPNG); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, p := range papers {
				checkPrintFonts(t, bin, dir, page, p)
			}
		})
	}
}

// checkPage fails the test on a page that did not finish, has script errors, or
// whose charts have overlapping or escaping labels. It returns the status.
func checkPage(t *testing.T, view, dom string) map[string]string {
	t.Helper()
	st := browsertest.Status(t, dom)
	if st["state"] != "done" || st["errors"] != "" {
		t.Errorf("%s: state %q, errors %q", view, st["state"], st["errors"])
	}
	if st["charts-drawn"] != st["charts-expected"] {
		t.Errorf("%s: %s of %s charts drew (blank: %s)", view, st["charts-drawn"], st["charts-expected"], st["charts-blank"])
	}
	for _, what := range []string{"overlaps", "outside"} {
		if st[what] != "" {
			t.Errorf("%s: labels %s:\n  %s", view, what, strings.ReplaceAll(html.UnescapeString(st[what]), " | ", "\n  "))
		}
	}
	t.Logf("%s: %s labels measured, %d overlapping, %d outside", view, st["labels"], count(st["overlaps"]), count(st["outside"]))
	return st
}

func count(list string) int {
	if list == "" {
		return 0
	}
	return strings.Count(list, " | ") + 1
}

// checkPrint checks the printed pages: no heading is the last line of a page, and
// the first page is filled at least half way. (A later page may end early where the
// next chart, kept whole with its heading, does not fit below: it logs how full
// each page is.)
// checkPrintedHeaders checks that the per-level table's headers print whole: its
// long single words print in their short forms, never broken inside a word into
// a column a few letters wide ("Co / nc / urr / enc / y").
func checkPrintedHeaders(t *testing.T, paper string, pages []browsertest.Page) {
	t.Helper()
	words := map[string]bool{}
	for _, p := range pages {
		for _, l := range p.Lines {
			for _, w := range l.Words {
				words[w.Text] = true
			}
		}
	}
	for _, want := range []string{"Lvl", "Conc.", "Req.", "Err.", "Output", "prefill"} {
		if !words[want] {
			t.Errorf("%s: the per-level table's header %q is not printed whole", paper, want)
		}
	}
}

func checkPrint(t *testing.T, paper string, pages []browsertest.Page, headings []string) {
	t.Helper()
	var fill []string
	for i, p := range pages {
		last, ok := p.Last()
		if !ok {
			t.Errorf("%s: page %d of %d is blank", paper, i+1, len(pages))
			continue
		}
		for _, h := range headings {
			if last.Text != "" && (strings.HasPrefix(h, last.Text) || strings.HasSuffix(h, last.Text)) && len(last.Text) > 3 {
				t.Errorf("%s: page %d ends with the heading %q, away from what it heads", paper, i+1, h)
			}
		}
		fill = append(fill, fmt.Sprintf("%.0f%%", 100*last.YMax/p.Height))
		if i == 0 && len(pages) > 1 && last.YMax < p.Height/2 {
			t.Errorf("%s: the first page is more than half blank (its text ends at %.0f of %.0f pt)", paper, last.YMax, p.Height)
		}
	}
	minH := 1e9
	for _, p := range pages {
		for _, l := range p.Lines {
			if l.Height > 0 && l.Height < minH {
				minH = l.Height
			}
		}
	}
	t.Logf("%s: %d pages, filled to %s; smallest printed line box %.1f pt", paper, len(pages), strings.Join(fill, ", "), minH)

	// Every printed word, body text, table cells and chart labels alike, is at
	// least minWordPt tall on paper. A page wider than the paper is printed
	// shrunk to fit: the levels table's twenty columns shrank the whole report by
	// a third (8 pt text 6.2 pt tall; issue 31).
	words, small := 0, 0
	var examples []string
	for i, p := range pages {
		for _, l := range p.Lines {
			for _, w := range l.Words {
				words++
				if w.Size < minWordPt {
					small++
					if len(examples) < 8 {
						examples = append(examples, fmt.Sprintf("%q %.1f pt on page %d", w.Text, w.Size, i+1))
					}
				}
			}
		}
	}
	t.Logf("%s: %d of %d printed words under %g pt", paper, small, words, minWordPt)
	if words < 200 {
		t.Errorf("%s: only %d printed words read back: the check saw nothing", paper, words)
	}
	if small > 0 {
		t.Errorf("%s: %d of %d printed words (%.1f%%) are under %g pt tall, e.g. %s", paper, small, words, 100*float64(small)/float64(words), minWordPt, strings.Join(examples, ", "))
	}
}

// minWordPt is the smallest a printed word may be, measured as pdftotext boxes it
// (about 1.15 × the font size): 7 pt, a 6 pt font at the least.
const minWordPt = 7.0

// checkPrintFonts lays the page out as it prints (the print rules applied to the
// screen, at the paper's printable width) and checks the smallest text the browser
// shows, HTML and chart alike, against 8 pt.
func checkPrintFonts(t *testing.T, bin, dir, page string, p paper) {
	t.Helper()
	html := strings.Replace(page, "@media print {", "@media all {", 1)
	file := filepath.Join(dir, "print-"+p.name+".html")
	if err := os.WriteFile(file, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browsertest.Open(t, bin, file, browsertest.View{Width: p.width, Height: 1100})
	st := browsertest.Status(t, dom)
	px, what, ok := strings.Cut(st["min-font"], ":")
	v, err := strconv.ParseFloat(px, 64)
	if !ok || err != nil {
		t.Fatalf("%s: no font size measured (%q)", p.name, st["min-font"])
	}
	pt := v * 0.75
	t.Logf("%s: smallest printed text %.2f pt (%q)", p.name, pt, html2text(what))
	if pt < 8-1e-6 {
		t.Errorf("%s: text %q prints at %.2f pt, below 8 pt", p.name, html2text(what), pt)
	}
}

func html2text(s string) string { return html.UnescapeString(s) }

var headingRe = regexp.MustCompile(`(?s)<h[1-3][^>]*>(.*?)</h[1-3]>`)
var tagRe = regexp.MustCompile(`<[^>]*>`)

// headingTexts are the texts of the page's headings, as they print.
func headingTexts(page string) []string {
	var out []string
	for _, m := range headingRe.FindAllStringSubmatch(page, -1) {
		s := strings.Join(strings.Fields(html.UnescapeString(tagRe.ReplaceAllString(m[1], ""))), " ")
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
