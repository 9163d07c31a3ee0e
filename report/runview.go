package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/engine"
)

// runView is what the page shows of one run besides its charts.
type runView struct {
	Index   int
	Label   string
	Model   string
	Color   string
	Source  string
	Verdict string
	Found   bool // a ceiling was found in the tested range
	// Deployment and Workload are the summary's lines on what was measured.
	Deployment string
	Workload   string
	Evidence   []string
	// Server is the evidence's table of the server's counters beside the client's.
	Server   levelTable
	Warnings []string
	Cards    []card
	Table    levelTable
	// Lengths and Turns are the workload as served beside what was asked, per level
	// and (for conversations) per turn of the key level; no rows when absent.
	Lengths levelTable
	Turns   levelTable
	// Errors are the failures per level by kind, with the server's own message.
	Errors levelTable
	Meta   []metaRow
	// MetaCols splits Meta into columns: two for a single run (a long list reads
	// badly at full width), one per run otherwise.
	MetaCols [][]metaRow

	run        *analyze.Run
	ceilingLvl *analyze.Level // the highest tested level within the ceiling
	peakLvl    *analyze.Level // the level with the highest output throughput
}

// card is one key number.
type card struct {
	Name, Value, Sub string
	Accent           bool
}

type levelTable struct {
	Header []string
	// Short is the label each column prints with on paper where Header's is too
	// long for a column of a twenty-column table ("" keeps Header's); nil: none.
	Short []string
	Rows  []levelRow
	// Unit notes the units of the columns.
	Note string
}

type levelRow struct {
	Cells   []string
	Ceiling bool // the level the key numbers come from
}

type metaRow struct{ Key, Value string }

// palette colours runs; the first is the primary run. Colour-blind-safe (Okabe-Ito
// order, blue first).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288", "#882255"}

func runColor(i int) string { return palette[i%len(palette)] }

func newRunView(r *analyze.Run, label string, idx int) *runView {
	v := &runView{Index: idx, Label: label, Model: r.Model, Color: runColor(idx), Source: r.Source, run: r}
	v.ceilingLvl, v.peakLvl = keyLevels(r)
	v.Verdict, v.Found = verdict(r)
	info := readInfo(r)
	v.Deployment = deploymentLine(r, info)
	v.Workload = workloadLine(r, info)
	v.Evidence = r.Ceiling.Evidence
	v.Server = serverTable(r)
	v.Warnings = r.Warnings
	v.Cards = cards(v)
	v.Table = table(r, v.ceilingLvl)
	v.Lengths = lengthsTable(r, v.ceilingLvl)
	v.Turns = turnsTable(v.ceilingLvl)
	v.Errors = errorsTable(r)
	v.Meta = metadata(r)
	v.MetaCols = [][]metaRow{v.Meta}
	return v
}

// keyLevels picks the level the key numbers describe (the highest level whose offered
// concurrency is within the realistic ceiling; the first level when none is, or the
// last when no ceiling was found) and the level of peak throughput.
func keyLevels(r *analyze.Run) (atCeiling, peak *analyze.Level) {
	// Only valid levels speak for the deployment: an invalid one did not run at
	// what it is labelled with, so no key number comes from it.
	var valid []*analyze.Level
	for i := range r.Levels {
		if r.Levels[i].Valid {
			valid = append(valid, &r.Levels[i])
		}
	}
	if len(valid) == 0 {
		return nil, nil
	}
	for _, l := range valid {
		if peak == nil || l.OutputTokS > peak.OutputTokS {
			peak = l
		}
	}
	c := r.Ceiling.Concurrency
	if c == nil {
		return valid[len(valid)-1], peak
	}
	for _, l := range valid {
		if float64(l.Concurrency) <= *c+1e-9 && (atCeiling == nil || l.Concurrency > atCeiling.Concurrency) {
			atCeiling = l
		}
	}
	if atCeiling == nil {
		atCeiling = valid[0]
	}
	return atCeiling, peak
}

// lastValidLevel is the highest valid level, nil when none is valid.
func lastValidLevel(r *analyze.Run) *analyze.Level {
	var last *analyze.Level
	for i := range r.Levels {
		l := &r.Levels[i]
		if l.Valid && (last == nil || l.Concurrency > last.Concurrency || (l.Concurrency == last.Concurrency && l.Rate > last.Rate)) {
			last = l
		}
	}
	return last
}

// bindingPhrase explains a binding limit in words.
func bindingPhrase(r *analyze.Run) string {
	c := r.Ceilings
	switch r.Ceiling.Binding {
	case "kv":
		if r.Capacity != nil && r.Capacity.ConcurrencyAtMeanRequest != nil {
			return fmt.Sprintf("bound by the KV cache (%s requests of this workload fit)", fmtConc(roundSig(*r.Capacity.ConcurrencyAtMeanRequest, 3)))
		}
		return "bound by the KV cache"
	case "batch":
		return "bound by the server's batch limit (decode concurrency stops growing)"
	case "slo":
		if t := sloText(r.SLO); t != "" {
			return "bound by the latency targets (" + t + ")"
		}
		return "bound by the latency targets"
	case "errors":
		if c := r.Ceiling.Concurrency; c != nil && *c == 0 {
			return "below the tested range: more requests fail than the errors criterion allows already at the lowest level"
		}
		return "bound by failed requests (above the errors criterion at the next level)"
	case "knee":
		_ = c
		return "at the throughput knee (more concurrency adds little throughput)"
	case "":
		return ""
	default:
		return "bound by " + r.Ceiling.Binding
	}
}

func sloText(s analyze.SLO) string {
	pct := func(p float64) string {
		if p <= 0 {
			p = 99
		}
		return analyze.PercentileName(p)
	}
	var parts []string
	if s.TTFT != nil {
		parts = append(parts, "TTFT "+pct(s.TTFTP)+" ≤ "+fmtDur(*s.TTFT))
	}
	if s.TPOT != nil {
		parts = append(parts, "TPOT "+pct(s.TPOTP)+" ≤ "+fmtDur(*s.TPOT))
	}
	if s.E2E != nil {
		parts = append(parts, "E2E "+pct(s.E2EP)+" ≤ "+fmtDur(*s.E2E))
	}
	return strings.Join(parts, ", ")
}

// verdict is the one line a reviewer reads first.
func verdict(r *analyze.Run) (string, bool) {
	if len(r.Levels) == 0 {
		return "No verdict: the run has no analyzed levels (nothing completed, or every request was a warm-up).", false
	}
	var others []string
	add := func(kind string, v *float64, text string) {
		if v != nil && kind != r.Ceiling.Binding {
			others = append(others, fmt.Sprintf(text, fmtConc(*v)))
		}
	}
	if p := r.Ceiling.Prediction; p != nil && p.Limit == "kv" {
		others = append(others, fmt.Sprintf("not reached by valid data up to %s; the KV figure predicts ~%s", fmtConc(p.ValidUpTo), fmtConc(round(p.Concurrency, 0))))
	} else {
		add("kv", r.Ceilings.KV, "the KV cache holds %s requests at once")
	}
	add("batch", r.Ceilings.Batch, "batch plateau at %s")
	add("knee", r.Ceilings.Knee, "throughput knee at %s")
	add("slo", r.Ceilings.SLO, "latency targets met up to %s")
	add("errors", r.Ceilings.Errors, "failed requests within the errors criterion up to %s")
	tail := ""
	if len(others) > 0 {
		tail = "; " + strings.Join(others, "; ")
	}
	if r.Ceiling.Concurrency == nil {
		last := lastValidLevel(r)
		if last == nil {
			return "No verdict: no level of the sweep is valid, so nothing measured locates the ceiling" + tail + ".", false
		}
		return fmt.Sprintf("No ceiling found in valid data up to %s concurrent requests: throughput still scales and no limit binds there; %s%s.", levelX(last), higherAdvice(r), tail), false
	}
	s := fmt.Sprintf("Realistic ceiling: %s concurrent requests", fmtConc(*r.Ceiling.Concurrency))
	if b := bindingPhrase(r); b != "" {
		s += ", " + b
	}
	return s + tail, true
}

// higherAdvice says how to test higher, in the words of the tool that recorded the
// run: an imported vLLM or SGLang benchmark whose levels were arrival-limited needs
// its own --request-rate inf, not this tool's flags.
func higherAdvice(r *analyze.Run) string {
	var info struct {
		Source *struct {
			Tool string `json:"tool"`
		} `json:"source"`
	}
	if len(r.Info) > 0 && json.Unmarshal(r.Info, &info) == nil && info.Source != nil {
		if b := engine.BenchOf(info.Source.Tool); b != nil {
			return b.Higher
		}
		if info.Source.Tool != "" {
			return "test higher with " + info.Source.Tool + " at more concurrency, with arrivals fast enough to keep every level full"
		}
	}
	return "test higher"
}

func cards(v *runView) []card {
	r := v.run
	var out []card
	if c := r.Ceiling.Concurrency; c != nil {
		sub := "concurrent requests"
		if b := bindingName(r.Ceiling.Binding); b != "" {
			sub += " · limit: " + b
		}
		out = append(out, card{Name: "Realistic ceiling", Value: fmtConc(*c), Sub: sub, Accent: true})
	} else {
		out = append(out, card{Name: "Realistic ceiling", Value: "not found", Sub: "in the tested range", Accent: true})
	}
	if p := v.peakLvl; p != nil {
		out = append(out, card{Name: "Peak output throughput", Value: fmtNum(p.OutputTokS) + " tok/s", Sub: "at concurrency " + levelX(p)})
	}
	if l := v.ceilingLvl; l != nil {
		at := "at concurrency " + levelX(l)
		// Without a ceiling the key level is the highest valid one: say so.
		where := "at the ceiling"
		switch c := r.Ceiling.Concurrency; {
		case c == nil:
			where = "at the last valid level"
		case *c == 0:
			// A ceiling below the tested range (0): the figures are the lowest level's,
			// which is already past it.
			where = "at the lowest level"
		}
		out = append(out, card{Name: "Throughput " + where, Value: fmtNum(l.OutputTokS) + " tok/s", Sub: at + " · " + fmtNum(l.PerUserTokS) + " tok/s per user"})
		out = append(out, card{Name: "TTFT p99 " + where, Value: fmtDurPtr(l.TTFT.P99), Sub: "p50 " + fmtDurPtr(l.TTFT.P50) + sloSuffix(r.SLO.TTFT)})
		out = append(out, card{Name: "TPOT p99 " + where, Value: fmtDurPtr(l.TPOT.P99), Sub: "p50 " + fmtDurPtr(l.TPOT.P50) + sloSuffix(r.SLO.TPOT)})
	}
	out = append(out, capacityCard(r.Capacity))
	if n := len(r.Levels); n > 0 {
		reqs, errs := 0, 0
		for _, l := range r.Levels {
			reqs += l.Requests
			errs += l.Errors
		}
		sub := fmt.Sprintf("%s requests · %s errors", fmtInt(int64(reqs)), fmtInt(int64(errs)))
		out = append(out, card{Name: "Sweep", Value: fmt.Sprintf("%d levels", n), Sub: levelSpan(r.Levels) + " · " + sub})
	}
	if f := r.Fit.USL; f != nil {
		sub := fmt.Sprintf("σ %s · κ %s", strconv.FormatFloat(roundSig(f.Sigma, 2), 'g', -1, 64), strconv.FormatFloat(roundSig(f.Kappa, 2), 'g', -1, 64))
		switch {
		case f.NMax != nil:
			sub += " · Nmax " + fmtConc(round(*f.NMax, 0))
		case f.NoPeak != "":
			// The words without the reason, which the analysis JSON keeps.
			sub += " · " + strings.SplitN(f.NoPeak, " (", 2)[0]
		}
		out = append(out, card{Name: "Scalability fit (USL)", Value: "R² " + strconv.FormatFloat(round(f.R2, 3), 'f', -1, 64), Sub: sub})
	}
	return out
}

func sloSuffix(v *float64) string {
	if v == nil {
		return ""
	}
	return " · target " + fmtDur(*v)
}

func bindingName(b string) string {
	switch b {
	case "kv":
		return "KV cache"
	case "batch":
		return "server batch"
	case "slo":
		return "latency SLO"
	case "knee":
		return "throughput knee"
	case "errors":
		return "failed requests"
	}
	return b
}

func capacityCard(c *analyze.Capacity) card {
	if c != nil && c.KVCapacityMinTokens != nil && c.KVCapacityMaxTokens != nil && c.Source != "modelled" {
		return card{Name: "KV cache capacity", Value: fmtInt(*c.KVCapacityMinTokens) + "–" + fmtInt(*c.KVCapacityMaxTokens) + " tokens",
			Sub: "one cache shared by the slots, or one per slot: the server does not say which"}
	}
	if c != nil && c.Layout == analyze.LayoutPerSlot && c.Slots != nil && c.SlotContextTokens != nil {
		return card{Name: "KV cache capacity", Value: fmtInt(*c.SlotContextTokens) + " tokens per slot",
			Sub: fmt.Sprintf("declared · %s slots, each holds one request of at most %s tokens", fmtInt(*c.Slots), fmtInt(*c.SlotContextTokens))}
	}
	if c == nil || c.KVCapacityTokens == nil {
		return card{Name: "KV cache capacity", Value: "unknown", Sub: "the server did not reveal it; pass --model-config and --gpu to model it"}
	}
	sub := c.Source
	if c.ConcurrencyAtMeanRequest != nil && c.MeanRequestTokens != nil {
		sub += fmt.Sprintf(" · fits %s requests of %s tokens", fmtConc(roundSig(*c.ConcurrencyAtMeanRequest, 3)), fmtNum(*c.MeanRequestTokens))
	}
	if c.Source == "declared" && c.ModelledKVCapacityTokens != nil {
		sub += " · modelled " + fmtInt(*c.ModelledKVCapacityTokens)
	}
	return card{Name: "KV cache capacity", Value: fmtInt(*c.KVCapacityTokens) + " tokens", Sub: sub}
}

// levelX is how a level is named on the page: its concurrency, or its rate in open loop.
func levelX(l *analyze.Level) string {
	if l.Concurrency == 0 && l.Rate > 0 {
		return fmtNum(l.Rate) + " req/s"
	}
	return fmtInt(int64(l.Concurrency))
}

// levelSpan is the range of the levels run, lowest–highest ("1–8"), whatever order
// they ran in: a search runs 8 before 7, and first–last would read "8–7".
func levelSpan(levels []analyze.Level) string {
	if len(levels) == 0 {
		return ""
	}
	offered := func(l *analyze.Level) float64 { // what levelX names
		if l.Concurrency == 0 && l.Rate > 0 {
			return l.Rate
		}
		return float64(l.Concurrency)
	}
	lo, hi := &levels[0], &levels[0]
	for i := range levels {
		l := &levels[i]
		if offered(l) < offered(lo) {
			lo = l
		}
		if offered(l) > offered(hi) {
			hi = l
		}
	}
	if levelX(lo) == levelX(hi) {
		return levelX(lo)
	}
	return levelX(lo) + "–" + levelX(hi)
}

// shortPrintLabels are the per-level table's headers on paper where a long word
// would otherwise break inside itself in a column a few characters wide
// ("Co nc urr enc y").
var shortPrintLabels = map[string]string{
	"Level": "Lvl", "Concurrency": "Conc.", "Requests": "Req.", "Errors": "Err.",
	"Goodput req/s": "Good req/s", "Decode conc.": "Dec. conc.", "Queue+prefill conc.": "Queue+ prefill conc.",
}

// printLabels are the paper labels of header (Short), "" where a header prints as it is.
func printLabels(header []string) []string {
	out := make([]string, len(header))
	for i, h := range header {
		out[i] = shortPrintLabels[h]
	}
	return out
}

func table(r *analyze.Run, ceil *analyze.Level) levelTable {
	t := levelTable{
		Header: []string{"Level", "Concurrency", "Requests", "Errors", "Output tok/s", "Naive tok/s", "Req/s", "Goodput req/s",
			"Decode conc.", "Queue+prefill conc.", "Per-user tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p99", "E2E p50", "E2E p99"},
		Note: "Throughput over each level's steady-state window (the tokens that arrived inside it); naive = all the level's output tokens / level duration. Decode and queue+prefill concurrency are requests in each phase on average over the window (Little's law); queue+prefill runs from send to first token, so it is not zero where nothing queues. Latencies over every successful request; p99.9 needs at least 1,000 requests in a level, shown as n=… < 1,000 where it has fewer, never as a number.",
	}
	t.Header = append(t.Header, "TTFT p99.9", "E2E p99.9")
	open := false
	for i := range r.Levels {
		open = open || r.Levels[i].TTFTFromScheduled != nil
	}
	if open {
		t.Header = append(t.Header, "TTFT p99 from scheduled", "E2E p99 from scheduled")
		t.Note += " Open loop: \"from scheduled\" latencies are measured from each request's scheduled send (scheduled_ns), corrected for coordinated omission, beside the ones from its actual send."
	}
	t.Short = printLabels(t.Header)
	for i := range r.Levels {
		l := &r.Levels[i]
		errs := fmtInt(int64(l.Errors))
		if len(l.ErrorKinds) > 0 {
			errs += " (" + kinds(l.ErrorKinds) + ")"
		}
		t.Rows = append(t.Rows, levelRow{
			Ceiling: l == ceil && r.Ceiling.Concurrency != nil,
			Cells: []string{
				strconv.Itoa(l.Level), levelX(l), fmtInt(int64(l.Requests)), errs,
				fmtNum(l.OutputTokS), fmtNum(l.NaiveOutputTokS), fmtNum(l.RequestS), fmtPtr(l.GoodputRequestS),
				fmtNum(l.DecodeConcurrency), fmtNum(l.WaitingConcurrency), fmtNum(l.PerUserTokS),
				fmtDurPtr(l.TTFT.P50), fmtDurPtr(l.TTFT.P99), fmtDurPtr(l.TPOT.P50), fmtDurPtr(l.TPOT.P99),
				fmtDurPtr(l.ITL.P99), fmtDurPtr(l.E2E.P50), fmtDurPtr(l.E2E.P99),
				tailText(l.TTFT, 99.9), tailText(l.E2E, 99.9),
			},
		})
		if open {
			row := &t.Rows[len(t.Rows)-1]
			row.Cells = append(row.Cells, schedText(l.TTFTFromScheduled), schedText(l.E2EFromScheduled))
		}
	}
	return t
}

func kinds(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// metadata flattens the run's ceiling.run object into key/value rows in the order
// the recorder wrote them, so fields added later show up without a report change.
// The per-level list is left out (the level table covers it).
func metadata(r *analyze.Run) []metaRow {
	rows := []metaRow{{"source", r.Source}, {"run_id", r.RunID}, {"model", r.Model}}
	info := r.Info
	if len(bytes.TrimSpace(info)) == 0 || string(bytes.TrimSpace(info)) == "null" {
		info = nil
		if len(bytes.TrimSpace(r.Server)) > 0 && string(bytes.TrimSpace(r.Server)) != "null" {
			info, _ = json.Marshal(map[string]json.RawMessage{"server": r.Server})
		}
	}
	if info != nil {
		dec := json.NewDecoder(bytes.NewReader(info))
		dec.UseNumber()
		var flat []metaRow
		if err := flatten(dec, "", &flat); err != nil {
			rows = append(rows, metaRow{"info", "unreadable run metadata: " + err.Error()})
		}
		for _, m := range flat {
			if m.Key == "run_id" || m.Key == "target.model" && m.Value == r.Model {
				continue
			}
			rows = append(rows, m)
		}
	}
	if c := r.Capacity; c != nil && c.Budget != nil {
		b := c.Budget
		rows = append(rows,
			metaRow{"capacity.gpu", fmt.Sprintf("%s × %d (TP %d), %s each, utilization %s", b.GPU, b.GPUs, b.TP, fmtGiB(b.MemoryBytes), fmtNum(b.Utilization))},
			metaRow{"capacity.kv_dtype", b.KVDtype})
	}
	if c := r.Capacity; c != nil && c.KVBudgetRange != nil {
		g := c.KVBudgetRange
		rows = append(rows, metaRow{"capacity.kv_budget_range", fmt.Sprintf("%s–%s per GPU as the reserve goes (%s flat, %s modelled from %s): the reserve moves the KV budget by %.0f%%",
			fmtGiB(g.LowBytes), fmtGiB(g.HighBytes), fmtGiB(g.FlatReserveBytes), fmtGiB(g.ModelledBytes), g.Assumption, g.MovesPercent())})
	}
	if c := r.Capacity; c != nil && c.KVBytesPerToken != nil {
		rows = append(rows, metaRow{"capacity.kv_bytes_per_token", fmtInt(*c.KVBytesPerToken)})
	}
	if c := r.Capacity; c != nil && c.MaxModelLen != nil {
		rows = append(rows, metaRow{"capacity.max_model_len", fmtInt(*c.MaxModelLen)})
	}
	out := rows[:0]
	for _, m := range rows {
		if m.Value != "" {
			out = append(out, m)
		}
	}
	return out
}

// flatten reads one JSON value from dec and appends its scalar leaves as dotted keys.
// Arrays of scalars are joined; arrays of objects are summarised by their length.
func flatten(dec *json.Decoder, prefix string, out *[]metaRow) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				if key == "levels" {
					var skip []json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					*out = append(*out, metaRow{key, fmt.Sprintf("%d recorded (see the level table)", len(skip))})
					continue
				}
				if err := flatten(dec, key, out); err != nil {
					return err
				}
			}
			_, err := dec.Token() // '}'
			return err
		case '[':
			var items []string
			complex := 0
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				var s any
				if json.Unmarshal(raw, &s) == nil {
					switch s := s.(type) {
					case map[string]any, []any:
						complex++
					case nil:
					default:
						items = append(items, fmt.Sprint(s))
					}
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			v := strings.Join(items, ", ")
			if complex > 0 {
				v = strings.TrimPrefix(v+fmt.Sprintf(", %d entries", complex), ", ")
			}
			*out = append(*out, metaRow{prefix, v})
			return nil
		}
	case nil:
		return nil // unknown: leave the row out
	case string:
		*out = append(*out, metaRow{prefix, t})
	case json.Number:
		*out = append(*out, metaRow{prefix, t.String()})
	case bool:
		*out = append(*out, metaRow{prefix, strconv.FormatBool(t)})
	}
	return nil
}

// compareTable puts the key numbers of several runs side by side.
func compareTable(runs []*runView) []compareRow {
	val := func(f func(v *runView) string) []string {
		out := make([]string, len(runs))
		for i, v := range runs {
			out[i] = f(v)
		}
		return out
	}
	lvl := func(f func(l *analyze.Level) string, pick func(v *runView) *analyze.Level) func(v *runView) string {
		return func(v *runView) string {
			if l := pick(v); l != nil {
				return f(l)
			}
			return dash
		}
	}
	atCeil := func(v *runView) *analyze.Level { return v.ceilingLvl }
	peak := func(v *runView) *analyze.Level { return v.peakLvl }
	return []compareRow{
		{Name: "Realistic ceiling", Strong: true, Values: val(func(v *runView) string { return fmtPtrConc(v.run.Ceiling.Concurrency) })},
		{Name: "Binding limit", Strong: true, Values: val(func(v *runView) string {
			if v.run.Ceiling.Concurrency == nil {
				return "none in range"
			}
			return bindingName(v.run.Ceiling.Binding)
		})},
		{Name: "Deployment", Values: val(func(v *runView) string { return v.Deployment })},
		{Name: "Workload", Values: val(func(v *runView) string { return v.Workload })},
		{Name: "KV ceiling", Values: val(func(v *runView) string { return fmtPtrConc(v.run.Ceilings.KV) })},
		{Name: "Batch ceiling", Values: val(func(v *runView) string { return fmtPtrConc(v.run.Ceilings.Batch) })},
		{Name: "Throughput knee", Values: val(func(v *runView) string { return fmtPtrConc(v.run.Ceilings.Knee) })},
		{Name: "SLO ceiling", Values: val(func(v *runView) string { return fmtPtrConc(v.run.Ceilings.SLO) })},
		{Name: "Peak output tok/s", Values: val(lvl(func(l *analyze.Level) string { return fmtNum(l.OutputTokS) + " at " + levelX(l) }, peak))},
		{Name: "Output tok/s at ceiling", Values: val(lvl(func(l *analyze.Level) string { return fmtNum(l.OutputTokS) + " at " + levelX(l) }, atCeil))},
		{Name: "Per-user tok/s at ceiling", Values: val(lvl(func(l *analyze.Level) string { return fmtNum(l.PerUserTokS) }, atCeil))},
		{Name: "TTFT p99 at ceiling", Values: val(lvl(func(l *analyze.Level) string { return fmtDurPtr(l.TTFT.P99) }, atCeil))},
		{Name: "TPOT p99 at ceiling", Values: val(lvl(func(l *analyze.Level) string { return fmtDurPtr(l.TPOT.P99) }, atCeil))},
		{Name: "KV capacity (tokens)", Values: val(func(v *runView) string {
			if c := v.run.Capacity; c != nil && c.KVCapacityTokens != nil {
				return fmtInt(*c.KVCapacityTokens) + " (" + c.Source + ")"
			}
			return dash
		})},
		{Name: "Requests that fit (mean request)", Values: val(func(v *runView) string {
			if c := v.run.Capacity; c != nil && c.ConcurrencyAtMeanRequest != nil {
				return fmtConc(roundSig(*c.ConcurrencyAtMeanRequest, 3))
			}
			return dash
		})},
		{Name: "Levels / errors", Values: val(func(v *runView) string {
			e := 0
			for _, l := range v.run.Levels {
				e += l.Errors
			}
			return fmt.Sprintf("%d / %s", len(v.run.Levels), fmtInt(int64(e)))
		})},
		{Name: "Warnings", Values: val(func(v *runView) string { return strconv.Itoa(len(v.run.Warnings)) })},
	}
}

func fmtPtrConc(v *float64) string {
	if v == nil {
		return dash
	}
	return fmtConc(*v)
}

// errorsTable lists each level's failures grouped by kind and message: what the
// server said, so that a reviewer sees "Context size has been exceeded." rather than
// a count.
func errorsTable(r *analyze.Run) levelTable {
	t := levelTable{
		Header: []string{"Level", "Concurrency", "Kind", "Failed", "Message (first seen)"},
		Note:   "Failed requests by kind and message, as the server (or the client, for timeouts and resets) worded them; messages that differ only in their numbers are one row. kv_exhausted: the server's KV cache ran out under load; context_exceeded: one request was longer than the context a sequence may hold.",
	}
	for i := range r.Levels {
		l := &r.Levels[i]
		for _, g := range l.ErrorGroups {
			t.Rows = append(t.Rows, levelRow{Cells: []string{strconv.Itoa(l.Level), levelX(l), g.Kind, fmtInt(int64(g.Count)), g.Message}})
		}
	}
	return t
}

// tailText is a tail percentile's cell: its value, or why there is none.
func tailText(s analyze.Summary, p float64) string {
	for _, t := range s.Tail {
		if t.P == p {
			if t.Value == nil {
				return fmt.Sprintf("n=%s < %s", fmtInt(int64(t.N)), fmtInt(int64(t.Need)))
			}
			return fmtDurPtr(t.Value)
		}
	}
	return "–"
}

// schedText is the p99 of a latency measured from the scheduled send.
func schedText(s *analyze.Summary) string {
	if s == nil {
		return "–"
	}
	return fmtDurPtr(s.P99)
}
