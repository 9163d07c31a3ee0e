package importer

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Published levels as a CSV: most public figures (vendor tables, blog posts,
// dashboards) are one row per concurrency level of one deployment, not requests.
// ReadSummaryCSV reads such a table into summary-level points, which `ceiling
// whatif` uses as the measured baseline; the deployment (GPU, GPU count, shape)
// is given beside it, as for a trace. The columns, by header name:
//
//	concurrency            required: requests in flight (closed loop), ≥ 1, unique
//	output_tok_s_per_gpu   output tokens/s per GPU, or
//	output_tok_s           output tokens/s of the whole deployment (one is required)
//	input_tokens           optional: mean prompt tokens
//	output_tokens          optional: mean output tokens
//	per_user_tok_s         optional: decode tokens/s one request sees
//	ttft_ms, tpot_ms       optional: median TTFT and TPOT in ms
//
// Other columns (a source, a note) are kept out of the numbers. Every error names
// the file, the row (1 = the first after the header, with its line) and the column.

// FromPointsCSV is a CSV of published levels (summary-level only).
const FromPointsCSV = "points-csv"

// pointsCSVColumns are the numeric columns ReadSummaryCSV reads.
var pointsCSVColumns = []string{"concurrency", "output_tok_s_per_gpu", "output_tok_s", "input_tokens", "output_tokens", "per_user_tok_s", "ttft_ms", "tpot_ms"}

// ReadSummaryCSV reads a CSV of published levels (see above) into points marked
// summary-level.
func ReadSummaryCSV(path string) (*Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	name := filepath.Base(path)
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.FieldsPerRecord = -1
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: not a CSV: %w", name, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: want a header and one row per level, got %d lines", name, len(recs))
	}
	cols := map[string]int{}
	for i, c := range recs[0] {
		c = strings.ToLower(strings.TrimSpace(c))
		if _, dup := cols[c]; dup && c != "" {
			return nil, fmt.Errorf("%s: header: column %q appears twice", name, c)
		}
		cols[c] = i
	}
	if _, ok := cols["concurrency"]; !ok {
		return nil, fmt.Errorf("%s: header: no column concurrency (the header has %s)", name, strings.Join(recs[0], ", "))
	}
	_, perGPU := cols["output_tok_s_per_gpu"]
	_, total := cols["output_tok_s"]
	if !perGPU && !total {
		return nil, fmt.Errorf("%s: header: no column output_tok_s_per_gpu or output_tok_s (one is required)", name)
	}
	s := &Summary{Tool: FromPointsCSV, Missing: []string{"per-request records (a table of published levels)"}}
	seen := map[float64]int{}
	for i, rec := range recs[1:] {
		row := i + 1
		where := fmt.Sprintf("%s row %d", name, row)
		if len(rec) != len(recs[0]) {
			return nil, fmt.Errorf("%s: %d fields, the header has %d", where, len(rec), len(recs[0]))
		}
		v := map[string]*float64{}
		for _, c := range pointsCSVColumns {
			j, ok := cols[c]
			if !ok {
				continue
			}
			cell := strings.TrimSpace(rec[j])
			if cell == "" {
				continue
			}
			x, err := strconv.ParseFloat(strings.ReplaceAll(cell, "_", ""), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s, column %s: %q is not a number", where, c, cell)
			}
			if x < 0 {
				return nil, fmt.Errorf("%s, column %s: %g is negative", where, c, x)
			}
			v[c] = &x
		}
		c := v["concurrency"]
		if c == nil || *c < 1 {
			return nil, fmt.Errorf("%s, column concurrency: want a level of at least 1 request, got %q", where, strings.TrimSpace(rec[cols["concurrency"]]))
		}
		if prev, dup := seen[*c]; dup {
			return nil, fmt.Errorf("%s, column concurrency: %g is row %d's level too: one row per level", where, *c, prev)
		}
		seen[*c] = row
		pt := SummaryPoint{Label: where, Concurrency: *c, OutputTokSPerGPU: v["output_tok_s_per_gpu"], OutputTokS: v["output_tok_s"],
			PerUserTokS: v["per_user_tok_s"], InputTokens: v["input_tokens"], OutputTokens: v["output_tokens"]}
		if pt.OutputTokSPerGPU == nil && pt.OutputTokS == nil {
			return nil, fmt.Errorf("%s, column %s: empty: the level's throughput is unknown", where, map[bool]string{true: "output_tok_s_per_gpu", false: "output_tok_s"}[perGPU])
		}
		for _, o := range []*float64{pt.OutputTokSPerGPU, pt.OutputTokS} {
			if o != nil && *o == 0 {
				return nil, fmt.Errorf("%s: a throughput of 0: not a level that served", where)
			}
		}
		if ms := v["ttft_ms"]; ms != nil {
			pt.TTFT.P50 = ptrTo(*ms / 1000)
		}
		if ms := v["tpot_ms"]; ms != nil {
			pt.TPOT.P50 = ptrTo(*ms / 1000)
		}
		pt.Model, pt.GPU = textCell(rec, cols, "model"), textCell(rec, cols, "gpu")
		s.Points = append(s.Points, pt)
	}
	if err := checkSummary(s, path); err != nil {
		return nil, err
	}
	s.SummaryLevel = true
	s.Files = []string{path}
	return s, nil
}

func textCell(rec []string, cols map[string]int, c string) string {
	if j, ok := cols[c]; ok {
		return strings.TrimSpace(rec[j])
	}
	return ""
}
