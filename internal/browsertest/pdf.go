package browsertest

import (
	"context"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Page is one printed page as poppler's pdftotext reads it back: its size in points
// and its lines of text, each with its bounding box.
type Page struct {
	Width, Height float64
	Lines         []Line
}

// Line is one line of text on a page, coordinates in points from the top left.
type Line struct {
	Text       string
	YMin, YMax float64
	// Height is the tallest word box of the line: about 1.15 × the font size for
	// the sans-serif fonts Chromium prints with.
	Height float64
	// Words are the line's words with their printed size.
	Words []Word
	// Vertical says the line runs down the page (a rotated chart label): its
	// words are stacked, each box as wide as the text is tall.
	Vertical bool
}

// Word is one printed word and its size: the height of its box across the line
// (for a vertical line, the box's width), about 1.15 × the font size as printed.
type Word struct {
	Text string
	Size float64
}

// Last is the line lowest on the page (the one a reader reaches last).
func (p Page) Last() (Line, bool) {
	var last Line
	for _, l := range p.Lines {
		if l.YMax > last.YMax {
			last = l
		}
	}
	return last, len(p.Lines) > 0
}

// Pdftotext finds poppler's pdftotext. Without it the test skips, except in CI,
// where it is a failure (scripts/deps.sh installs poppler-utils).
func Pdftotext(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pdftotext not found (apt-get install poppler-utils): %v", err)
		}
		t.Skipf("pdftotext not found (apt-get install poppler-utils): %v", err)
	}
	return path
}

// ReadPDF returns the pages of a PDF with the lines of text on each.
func ReadPDF(t testing.TB, pdftotext, pdf string) []Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pdftotext, "-bbox-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	pages, err := parseBBox(out)
	if err != nil {
		t.Fatalf("reading pdftotext's output for %s: %v", pdf, err)
	}
	return pages
}

// parseBBox reads pdftotext -bbox-layout's XHTML: page > flow > block > line > word.
func parseBBox(b []byte) ([]Page, error) {
	type word struct {
		XMin float64 `xml:"xMin,attr"`
		XMax float64 `xml:"xMax,attr"`
		YMin float64 `xml:"yMin,attr"`
		YMax float64 `xml:"yMax,attr"`
		Text string  `xml:",chardata"`
	}
	type line struct {
		YMin  float64 `xml:"yMin,attr"`
		YMax  float64 `xml:"yMax,attr"`
		Words []word  `xml:"word"`
	}
	type block struct {
		Lines []line `xml:"line"`
	}
	type flow struct {
		Blocks []block `xml:"block"`
	}
	type page struct {
		Width  float64 `xml:"width,attr"`
		Height float64 `xml:"height,attr"`
		Flows  []flow  `xml:"flow"`
	}
	var doc struct {
		Body struct {
			Doc struct {
				Pages []page `xml:"page"`
			} `xml:"doc"`
		} `xml:"body"`
	}
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var out []Page
	for _, p := range doc.Body.Doc.Pages {
		pg := Page{Width: p.Width, Height: p.Height}
		for _, f := range p.Flows {
			for _, bl := range f.Blocks {
				for _, l := range bl.Lines {
					var words []string
					// Stacked, read downwards or upwards: each word's box lies wholly
					// below, or wholly above, the one before it.
					down, up := len(l.Words) > 1, len(l.Words) > 1
					for i := 1; i < len(l.Words); i++ {
						a, b := l.Words[i-1], l.Words[i]
						down = down && b.YMin >= a.YMax-0.5
						up = up && b.YMax <= a.YMin+0.5
					}
					ln := Line{YMin: l.YMin, YMax: l.YMax, Vertical: down || up}
					for _, w := range l.Words {
						words = append(words, w.Text)
						ln.Height = max(ln.Height, w.YMax-w.YMin)
						size := w.YMax - w.YMin
						if ln.Vertical {
							size = w.XMax - w.XMin
						}
						ln.Words = append(ln.Words, Word{Text: w.Text, Size: size})
					}
					ln.Text = strings.Join(words, " ")
					pg.Lines = append(pg.Lines, ln)
				}
			}
		}
		out = append(out, pg)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pages")
	}
	return out, nil
}
