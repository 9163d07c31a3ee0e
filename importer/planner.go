package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/prediction"
)

// Planner predictions: what a deployment planner (NVIDIA AIConfigurator, Dynamo's
// profiler, llm-d's planner, BentoML llm-optimizer, a simulator) predicts a
// deployment serves, before anyone measures it. They are read into a Prediction,
// never into a trace: a prediction has no requests, and nothing here turns one into
// measurements. Every consumer marks it predicted.
//
// Two formats are read, told apart by content:
//   - AIConfigurator's pareto.csv and best_config_topn.csv (aiconfigurator.go);
//   - ceiling's planner format, for any other planner: JSON or CSV with one point
//     per line (docs/predictions.md):
//
//	{"ceiling_prediction": 1, "planner": "llm-d planner 0.3", "model": "...",
//	 "gpu": "b200", "gpus": 8, "prompt_tokens": 8192, "output_tokens": 1024,
//	 "points": [{"concurrency": 384, "output_tok_s_per_gpu": 883.7,
//	             "tok_s_per_user": 21.87, "ttft_ms": 950, "tpot_ms": 45.7,
//	             "config": "TP 8"}]}
//
//	concurrency,output_tok_s_per_gpu,tok_s_per_user,ttft_ms,tpot_ms,config,gpus
//	384,883.7,21.87,,,TP 8,8

// Planner tools, as Prediction.Tool names them.
const (
	FromAIConfigurator = "aiconfigurator"
	FromPlanner        = "planner"
)

// PredictionSchema is the value of ceiling_prediction in the planner JSON format.
const PredictionSchema = 1

// Prediction is one planner's predicted operating points for one workload (the
// type lives in package prediction, so that analyze can read one without
// importing the importers).
type Prediction = prediction.Prediction

// PredictedPoint is one predicted operating point (one row of a planner's table).
type PredictedPoint = prediction.Point

// ErrNotPrediction is wrapped by DetectPrediction's error for a file that is not a
// planner's output.
var ErrNotPrediction = errors.New("not a planner prediction")

// maxPredictionBytes bounds a prediction file: planners' tables are kilobytes.
const maxPredictionBytes = 64 << 20

// DetectPrediction says which planner wrote path (FromAIConfigurator or
// FromPlanner), from its content; a file of no planner gives an error wrapping
// ErrNotPrediction.
func DetectPrediction(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w (not a regular file)", path, ErrNotPrediction)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return detectPrediction(filepath.Base(path), head)
}

func detectPrediction(name string, head []byte) (string, error) {
	text := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	if len(text) == 0 {
		return "", fmt.Errorf("%s: %w (empty)", name, ErrNotPrediction)
	}
	if text[0] == '{' {
		if bytes.Contains(text, []byte(`"ceiling_prediction"`)) {
			return FromPlanner, nil
		}
		return "", fmt.Errorf("%s: %w (JSON without ceiling_prediction)", name, ErrNotPrediction)
	}
	first := string(text)
	if i := strings.IndexAny(first, "\r\n"); i >= 0 {
		first = first[:i]
	}
	cols := map[string]bool{}
	for _, c := range strings.Split(first, ",") {
		cols[strings.TrimSpace(strings.Trim(c, `"`))] = true
	}
	switch {
	case cols["concurrency"] && cols["tokens/s/gpu"]:
		return FromAIConfigurator, nil
	case cols["concurrency"] && cols["output_tok_s_per_gpu"]:
		return FromPlanner, nil
	}
	return "", fmt.Errorf("%s: %w (no header with concurrency and tokens/s/gpu or output_tok_s_per_gpu)", name, ErrNotPrediction)
}

// ReadPrediction reads one planner file (any format DetectPrediction knows).
func ReadPrediction(path string) (*Prediction, error) {
	tool, err := DetectPrediction(path)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(path, maxPredictionBytes)
	if err != nil {
		return nil, err
	}
	var p *Prediction
	switch {
	case tool == FromAIConfigurator:
		p, err = parseAIConfigurator(path, data)
	case bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")):
		p, err = parsePlannerJSON(path, data)
	default:
		p, err = parsePlannerCSV(path, data)
	}
	if err != nil {
		return nil, err
	}
	p.Predicted = true
	p.Schema = PredictionSchema
	p.Files = []string{path}
	if len(p.Points) == 0 {
		return nil, fmt.Errorf("%s: no predicted point", path)
	}
	sort.SliceStable(p.Points, func(i, j int) bool { return p.Points[i].Concurrency < p.Points[j].Concurrency })
	return p, nil
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a planner's table", path, limit>>20)
	}
	return data, nil
}

// plannerJSON is the planner JSON format as written.
type plannerJSON struct {
	Schema       *int             `json:"ceiling_prediction"`
	Tool         string           `json:"tool"`
	Planner      string           `json:"planner"`
	Model        string           `json:"model"`
	GPU          string           `json:"gpu"`
	GPUs         int              `json:"gpus"`
	PromptTokens float64          `json:"prompt_tokens"`
	OutputTokens float64          `json:"output_tokens"`
	Points       []PredictedPoint `json:"points"`
}

func parsePlannerJSON(path string, data []byte) (*Prediction, error) {
	var in plannerJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("%s: planner JSON: %w", path, err)
	}
	if in.Schema == nil || *in.Schema != PredictionSchema {
		return nil, fmt.Errorf("%s: ceiling_prediction must be %d", path, PredictionSchema)
	}
	p := &Prediction{Tool: FromPlanner, Planner: in.Planner, Model: in.Model, GPU: in.GPU, GPUs: in.GPUs,
		PromptTokens: in.PromptTokens, OutputTokens: in.OutputTokens}
	if in.Tool == FromAIConfigurator {
		p.Tool = in.Tool // written by ceiling import from AIConfigurator's CSV
	}
	if p.Planner == "" {
		p.Planner = "unnamed planner"
	}
	if err := checkLengths(path, p); err != nil {
		return nil, err
	}
	for i, pt := range in.Points {
		if pt.Label == "" {
			pt.Label = fmt.Sprintf("points[%d]", i)
		}
		if err := checkPoint(path, pt); err != nil {
			return nil, err
		}
		p.Points = append(p.Points, pt)
	}
	return p, nil
}

func parsePlannerCSV(path string, data []byte) (*Prediction, error) {
	t, err := readTable(path, data)
	if err != nil {
		return nil, err
	}
	if err := t.require("concurrency", "output_tok_s_per_gpu"); err != nil {
		return nil, err
	}
	p := &Prediction{Tool: FromPlanner, Planner: "unnamed planner"}
	for r := range t.rows {
		pt := PredictedPoint{Label: fmt.Sprintf("%s row %d", filepath.Base(path), r+1)}
		var err error
		if pt.Concurrency, err = t.number(r, "concurrency"); err != nil {
			return nil, err
		}
		if pt.OutputTokSPerGPU, err = t.number(r, "output_tok_s_per_gpu"); err != nil {
			return nil, err
		}
		if pt.PerUserTokS, err = t.optional(r, "tok_s_per_user"); err != nil {
			return nil, err
		}
		if pt.TTFTms, err = t.optional(r, "ttft_ms"); err != nil {
			return nil, err
		}
		if pt.TPOTms, err = t.optional(r, "tpot_ms"); err != nil {
			return nil, err
		}
		g, err := t.optional(r, "gpus")
		if err != nil {
			return nil, err
		}
		if g != nil {
			pt.GPUs = int(*g)
		}
		pt.Config = t.text(r, "config")
		if s := t.text(r, "planner"); s != "" {
			p.Planner = s
		}
		if err := checkPoint(path, pt); err != nil {
			return nil, err
		}
		p.Points = append(p.Points, pt)
	}
	return p, nil
}

func checkLengths(path string, p *Prediction) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"prompt_tokens", p.PromptTokens}, {"output_tokens", p.OutputTokens}, {"gpus", float64(p.GPUs)}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1e9 {
			return fmt.Errorf("%s: %s %g is out of range", path, f.name, f.v)
		}
	}
	return nil
}

// checkPoint refuses a point no planner predicts: a concurrency or throughput that
// is not a positive finite number, negative latencies.
func checkPoint(path string, pt PredictedPoint) error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(pt.Concurrency) || pt.Concurrency < 1 || pt.Concurrency > 1e7 {
		return fmt.Errorf("%s: %s: concurrency %g must be a number from 1 to 10,000,000", path, pt.Label, pt.Concurrency)
	}
	if bad(pt.OutputTokSPerGPU) || pt.OutputTokSPerGPU <= 0 {
		return fmt.Errorf("%s: %s: output tokens/s per GPU %g must be a positive number", path, pt.Label, pt.OutputTokSPerGPU)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"tokens/s per user", pt.PerUserTokS}, {"TTFT (ms)", pt.TTFTms}, {"TPOT (ms)", pt.TPOTms}} {
		if f.v != nil && (bad(*f.v) || *f.v < 0) {
			return fmt.Errorf("%s: %s: %s %g must be a non-negative number", path, pt.Label, f.name, *f.v)
		}
	}
	if pt.GPUs < 0 {
		return fmt.Errorf("%s: %s: gpus %d must not be negative", path, pt.Label, pt.GPUs)
	}
	return nil
}

// table is a CSV file with a header, read for named columns.
type table struct {
	path string
	cols map[string]int
	rows [][]string
}

func readTable(path string, data []byte) (*table, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: CSV: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: a header and no row: no predicted point", path)
	}
	t := &table{path: path, cols: map[string]int{}}
	for i, c := range recs[0] {
		t.cols[strings.TrimSpace(c)] = i
	}
	for i, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			return nil, fmt.Errorf("%s: row %d has %d fields, the header %d", path, i+1, len(rec), len(recs[0]))
		}
		t.rows = append(t.rows, rec)
	}
	return t, nil
}

func (t *table) require(cols ...string) error {
	var missing []string
	for _, c := range cols {
		if _, ok := t.cols[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: no column %s", t.path, strings.Join(missing, ", "))
	}
	return nil
}

func (t *table) has(col string) bool { _, ok := t.cols[col]; return ok }

func (t *table) text(row int, col string) string {
	i, ok := t.cols[col]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.rows[row][i])
}

// number is a required numeric cell.
func (t *table) number(row int, col string) (float64, error) {
	v, err := t.optional(row, col)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("%s: row %d: %s is empty", t.path, row+1, col)
	}
	return *v, nil
}

// optional is a numeric cell that may be empty (nil).
func (t *table) optional(row int, col string) (*float64, error) {
	s := t.text(row, col)
	if s == "" || strings.EqualFold(s, "nan") || strings.EqualFold(s, "none") {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s: row %d: %s %q is not a number", t.path, row+1, col, s)
	}
	return &v, nil
}
