package analyze

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// What analyze builds from a metrics file is bounded by what it keeps, not by the
// file's size: Parquet stores a series repeated scrape after scrape in a few bytes
// a sample, so a file of 857 KB held millions of samples, and each kept sample
// used to hold its own copy of its name and labels (2.9 GB). Now a name or label
// text is held once (metricStrings), at most maxSidecarSamples selected samples
// are kept per file, and a GPU value outside what any GPU reports is left out
// (gpuValueRanges), each with a warning naming the file and the series.

// maxSidecarSamples bounds the selected samples (GPU telemetry, server counters,
// plotted series) kept from one metrics file: a few hundred MB at most. Twelve
// hours of scrapes every second of 8 GPUs' six fields are 2 million.
const maxSidecarSamples = 1 << 21

// maxMetricStrings bounds the distinct names and label texts held once; beyond it
// a string is held per sample (a file that invents labels every sample).
const maxMetricStrings = 1 << 16

// metricStrings holds each name and label text read from a metrics file once: the
// strings the reader passes point into a record batch that is reused.
type metricStrings map[string]string

func (m metricStrings) get(s string) string {
	if v, ok := m[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(m) < maxMetricStrings {
		m[v] = v
	}
	return v
}

// gpuValueRange is what a GPU field can be, in ceiling's units after the
// exporter's scale (gpuFields): wider than any GPU made (a 1.2 kW B200, 288 GB of
// HBM, a 3 GHz clock), so that only a broken or hostile exporter falls outside.
type gpuValueRange struct {
	lo, hi float64
	unit   string
}

var gpuValueRanges = map[string]gpuValueRange{
	"power":    {0, 5000, "W"},
	"energy":   {0, 1e13, "J"}, // a counter since the driver loaded: 300 years at 1 kW
	"util":     {0, 100, "%"},
	"smactive": {0, 100, "%"},
	"mem":      {0, 1 << 24, "MiB"}, // 16 TiB
	"clock":    {0, 10000, "MHz"},
}

// gpuValueOK says whether v of the GPU series name is a value a GPU can report.
func gpuValueOK(name string, v float64) bool {
	f := gpuFields[name]
	r, ok := gpuValueRanges[f.kind]
	if !ok {
		return true
	}
	x := v * f.scale
	return !math.IsNaN(x) && x >= r.lo && x <= r.hi
}

// metricNotes counts what loading a metrics file left out, for its warnings.
type metricNotes struct {
	outOfRange map[string]*rangeNote // by series name
	dropped    int                   // selected samples past maxSidecarSamples
	// nonFinite counts a server series' values that are no number (NaN, ±Inf), by
	// name: a server may export them, and one would make the analysis unwritable
	// as JSON.
	nonFinite map[string]int
}

func (m *metricNotes) notANumber(name string) {
	if m.nonFinite == nil {
		m.nonFinite = map[string]int{}
	}
	m.nonFinite[name]++
}

// rangeNote is the out-of-range values of one series: how many, and the first.
type rangeNote struct {
	n      int
	labels string
	first  float64
}

func (m *metricNotes) outside(name, labels string, v float64) {
	if m.outOfRange == nil {
		m.outOfRange = map[string]*rangeNote{}
	}
	if r := m.outOfRange[name]; r != nil {
		r.n++
		return
	}
	m.outOfRange[name] = &rangeNote{n: 1, labels: labels, first: v}
}

// warnings says what was left out of the file path, one line per series.
func (m *metricNotes) warnings(path string, limit int) []string {
	var ws []string
	names := make([]string, 0, len(m.outOfRange))
	for n := range m.outOfRange {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r := m.outOfRange[n]
		f := gpuFields[n]
		rg := gpuValueRanges[f.kind]
		ws = append(ws, fmt.Sprintf("GPU telemetry %s: %d values of %s out of range left out (the first %s{%s} = %g, i.e. %g %s; a GPU reports %g..%g %s)",
			path, r.n, n, n, r.labels, r.first, r.first*f.scale, rg.unit, rg.lo, rg.hi, rg.unit))
	}
	names = names[:0]
	for n := range m.nonFinite {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ws = append(ws, fmt.Sprintf("server metrics %s: %d values of %s are not numbers (NaN or ±Inf, as the server exported them) and are left out", path, m.nonFinite[n], n))
	}
	if m.dropped > 0 {
		ws = append(ws, fmt.Sprintf("server metrics %s: more than %d samples of the series ceiling reads; the last %d are left out", path, limit, m.dropped))
	}
	return ws
}
