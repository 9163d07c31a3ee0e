package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/internal/safetext"
)

// Options control how a report is written. The zero value is usable.
type Options struct {
	// Title heads the page; "" derives it from the model names.
	Title string
	// GeneratedAt is printed in the header; the zero time omits it (golden files).
	GeneratedAt time.Time
	// Tool names the program and version that wrote the report, e.g. "ceiling 0.1.0".
	Tool string
	// MaxTimelineRequests caps the requests drawn on the per-request timeline
	// (0 = 300); more are thinned evenly and the chart says so.
	MaxTimelineRequests int
}

// Write renders a as one self-contained HTML page to w.
func Write(w io.Writer, a *analyze.Analysis, opt Options) error {
	if a == nil {
		return errors.New("report: no analysis")
	}
	p, err := buildPage(a, opt)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := pageTemplate.Execute(&page, p); err != nil {
		return fmt.Errorf("report: rendering page: %w", err)
	}
	// The template escapes markup but leaves control characters a server or a file
	// put in its strings (a bidi override reorders what the reader sees, an escape
	// sequence acts on a terminal that shows the file): they are written as \uXXXX,
	// shown as such in the text and decoded back to the same data in the JSON.
	if _, err := w.Write(safetext.Escaped(page.Bytes())); err != nil {
		return fmt.Errorf("report: writing page: %w", err)
	}
	return nil
}

// page is everything the HTML template shows; all strings are plain text and the
// template escapes them, except the fields typed template.JS, which scriptJSON made
// safe for a <script> element.
type page struct {
	Title     string
	Generated string
	Tool      string
	Multi     bool
	Runs      []*runView
	Compare   []compareRow
	// Comparison is the verdict of two runs compared (compareverdict.go).
	Comparison *comparisonView
	Sections   []section
	// NoLevels is true when no run has a single level: the page then says so instead
	// of drawing empty charts.
	NoLevels bool
	// HasEvidence is true when some run's ceiling comes with evidence in words or
	// its levels with the lengths served.
	HasEvidence bool

	AnalysisJSON template.JS
	ChartsJSON   template.JS
	EchartsGz    template.JS // a JSON string holding base64(gzip(echarts))
	ChartCount   int
	CSS          template.CSS
	Script       template.JS
	Licence      string
}

// section is a group of charts under one heading.
type section struct {
	ID     string
	Title  string
	Intro  string
	Charts []chartView
	// Notes are shown instead of (or beside) charts, e.g. "capacity unknown".
	Notes []string
	// Lead is the first row of Charts and Rest the others: the heading is printed
	// in one piece with the lead row, so that it never ends a page alone.
	Lead, Rest []chartView
	// Raw charts are shown collapsed below the others (the scrape-by-scrape
	// metric series behind the per-level aggregates).
	Raw []chartView
}

// chartView is one chart's place on the page; its option travels in ChartsJSON.
type chartView struct {
	ID      string
	Title   string
	Caption string
	Wide    bool
	Height  int
}

// compareRow is one row of the side-by-side table of several runs.
type compareRow struct {
	Name   string
	Values []string
	// Strong marks the verdict rows.
	Strong bool
}

func buildPage(a *analyze.Analysis, opt Options) (*page, error) {
	p := &page{
		Title:   opt.Title,
		Tool:    opt.Tool,
		Multi:   len(a.Runs) > 1,
		CSS:     template.CSS(pageCSS),
		Script:  template.JS(pageJS),
		Licence: "Charts drawn with Apache ECharts 5.4.3 (Apache-2.0, includes zrender and parts of d3, BSD-3-Clause), embedded.",
	}
	if !opt.GeneratedAt.IsZero() {
		p.Generated = opt.GeneratedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	labels := runLabels(a.Runs)
	levels := 0
	for i := range a.Runs {
		p.Runs = append(p.Runs, newRunView(&a.Runs[i], labels[i], i))
		levels += len(a.Runs[i].Levels)
	}
	p.NoLevels = levels == 0
	for _, r := range p.Runs {
		p.HasEvidence = p.HasEvidence || len(r.Evidence) > 0 || len(r.Lengths.Rows) > 0 || len(r.Server.Rows) > 0 || len(r.Errors.Rows) > 0
	}
	if len(p.Runs) == 1 && len(p.Runs[0].Meta) > 8 {
		m := p.Runs[0].Meta
		half := (len(m) + 1) / 2
		p.Runs[0].MetaCols = [][]metaRow{m[:half], m[half:]}
	}
	if p.Title == "" {
		p.Title = defaultTitle(a.Runs, labels)
	}
	if p.Multi {
		p.Compare = compareTable(p.Runs)
		_, p.Comparison = comparisonOf(a.Runs, labels)
	}

	charts, sections := buildCharts(a, labels, opt)
	for i := range sections {
		sections[i].Lead, sections[i].Rest = firstRow(sections[i].Charts)
	}
	p.Sections = sections
	p.ChartCount = len(charts)

	cj, err := json.Marshal(charts)
	if err != nil {
		return nil, fmt.Errorf("report: encoding chart options: %w", err)
	}
	p.ChartsJSON = scriptJSON(cj)
	aj, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("report: encoding analysis: %w", err)
	}
	p.AnalysisJSON = scriptJSON(aj)
	gz, err := json.Marshal(base64.StdEncoding.EncodeToString(echartsGz))
	if err != nil {
		return nil, fmt.Errorf("report: encoding chart library: %w", err)
	}
	p.EchartsGz = template.JS(gz)
	return p, nil
}

// firstRow splits charts into the first row of the two-column grid (a wide chart
// alone, or two narrow ones) and the rest.
func firstRow(cs []chartView) (lead, rest []chartView) {
	n := min(1, len(cs))
	if len(cs) >= 2 && !cs[0].Wide && !cs[1].Wide {
		n = 2
	}
	return cs[:n], cs[n:]
}

// scriptJSON makes JSON safe to place inside a <script> element. In JSON a '<' can
// only occur inside a string, where \u003c means the same, so no "</script" or
// "<!--" can end or confuse the element whatever the data holds; the "</" → "<\/"
// rule (which go-echarts' own templates do not apply) is then satisfied trivially
// and kept as a second guard. U+2028/2029 are escaped for old JavaScript parsers.
func scriptJSON(b []byte) template.JS {
	b = bytes.ReplaceAll(b, []byte("<"), []byte(`\u003c`))
	b = bytes.ReplaceAll(b, []byte(">"), []byte(`\u003e`))
	b = bytes.ReplaceAll(b, []byte("</"), []byte(`<\/`))
	b = bytes.ReplaceAll(b, []byte("\u2028"), []byte(`\u2028`))
	b = bytes.ReplaceAll(b, []byte("\u2029"), []byte(`\u2029`))
	return template.JS(b)
}

func defaultTitle(runs []analyze.Run, labels []string) string {
	switch len(runs) {
	case 0:
		return "Capacity report"
	case 1:
		return "Capacity report: " + labels[0]
	default:
		return fmt.Sprintf("Capacity report: %d runs compared", len(runs))
	}
}

// runLabels names each run for legends: the model name when that is unique, else the
// model and the source file, else the run id.
func runLabels(runs []analyze.Run) []string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.Model]++
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		l := r.Model
		src := baseName(r.Source)
		if src == "" {
			src = r.RunID
		}
		switch {
		case l == "" && src == "":
			l = fmt.Sprintf("run %d", i+1)
		case l == "":
			l = src
		case count[l] > 1 && src != "":
			// Same model twice (two quantizations, two servers): the file tells
			// them apart, and legends stay short.
			l = strings.TrimSuffix(strings.TrimSuffix(src, ".parquet"), ".parts")
		}
		out[i] = l
	}
	// Still ambiguous (same model, same file name): number them.
	seen := map[string]int{}
	for _, l := range out {
		seen[l]++
	}
	for i, l := range out {
		if seen[l] > 1 {
			out[i] = fmt.Sprintf("%s #%d", l, i+1)
		}
	}
	return out
}
