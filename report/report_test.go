package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func render(t testing.TB, a *analyze.Analysis, opt Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, a, opt); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.String()
}

// scriptBody returns the text of <script ... id="id">…</script>.
func scriptBody(t testing.TB, html, id string) string {
	t.Helper()
	re := regexp.MustCompile(`<script type="application/json" id="` + regexp.QuoteMeta(id) + `">([\s\S]*?)</script>`)
	m := re.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no script#%s in the page", id)
	}
	return m[1]
}

func TestStructure(t *testing.T) {
	a := fixture(10, 500)
	html := render(t, a, Options{Tool: "ceiling test", GeneratedAt: time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)})

	for _, want := range []string{
		"<!DOCTYPE html>",
		"<title>Capacity report: Llama-3.1-8B-Instruct</title>",
		"Realistic ceiling: 48 concurrent requests, at the throughput knee",
		"generated 2025-01-02 03:04 UTC",
		`id="ceiling-status"`,
		"level 9 (concurrency 512): 12 requests failed",
		"Per-level statistics", "Run metadata", "plan.concurrency",
		"Showing 300 of 500 requests (thinned evenly)",
		"Deployment", "Workload", "served by vllm 0.6.3", "1 × h100-sxm (80 GiB each), TP 1",
		"closed loop, concurrency 1, 2, 4, 8, 16, 32, 64, 128, 256, 512", "SLO TTFT p99 ≤ 2 s, TPOT p99 ≤ 50 ms",
		"Queue&#43;prefill conc.",
		"@media print",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The verdict comes before any chart or table.
	if v, c := strings.Index(html, `class="verdict-line"`), strings.Index(html, `class="chart-box"`); v < 0 || c < 0 || v > c {
		t.Errorf("verdict at %d, first chart at %d: the verdict must come first", v, c)
	}
	// Self-contained: nothing is fetched from anywhere.
	for _, bad := range []string{"<script src", "<link", "http://cdn", "https://", "go-echarts.github.io", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q: it must not load anything", bad)
		}
	}
	// Every chart option has its element, and vice versa.
	var specs []chartSpec
	if err := json.Unmarshal([]byte(scriptBody(t, html, "ceiling-charts")), &specs); err != nil {
		t.Fatalf("chart options are not JSON: %v", err)
	}
	if len(specs) < 10 {
		t.Errorf("%d charts, want the ten kinds of the issue at least", len(specs))
	}
	for _, s := range specs {
		if !strings.Contains(html, `id="`+s.ID+`"`) {
			t.Errorf("chart %s has no element", s.ID)
		}
		var opt map[string]any
		if err := json.Unmarshal(s.Option, &opt); err != nil {
			t.Errorf("chart %s: option: %v", s.ID, err)
			continue
		}
		for _, k := range []string{"tooltip", "legend", "series"} {
			if opt[k] == nil {
				t.Errorf("chart %s: no %s", s.ID, k)
			}
		}
		if xs, ok := opt["xAxis"].([]any); ok {
			for _, x := range xs {
				if m, _ := x.(map[string]any); m["name"] == nil && m["type"] != "category" {
					t.Errorf("chart %s: x axis without a name", s.ID)
				}
			}
		}
	}
	if got := strings.Count(html, `class="chart-box"`); got != len(specs) {
		t.Errorf("%d chart elements for %d options", got, len(specs))
	}
	if !strings.Contains(html, `data-charts-expected="`+itoa(len(specs))+`"`) {
		t.Errorf("status element does not expect %d charts", len(specs))
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestAnalysisRoundTrip(t *testing.T) {
	for name, a := range map[string]*analyze.Analysis{"one": fixture(4, 50), "two": fixtureTwo(3, 20), "hostile": fixtureHostile(), "empty": fixtureEmpty(2)} {
		t.Run(name, func(t *testing.T) {
			html := render(t, a, Options{})
			var back analyze.Analysis
			if err := json.Unmarshal([]byte(scriptBody(t, html, "ceiling-analysis")), &back); err != nil {
				t.Fatalf("embedded analysis is not JSON: %v", err)
			}
			want, _ := json.Marshal(a)
			got, _ := json.Marshal(&back)
			if !bytes.Equal(want, got) {
				t.Errorf("embedded analysis differs from the input:\n got %.300s\nwant %.300s", got, want)
			}
		})
	}
}

func TestEscaping(t *testing.T) {
	a := fixtureHostile()
	html := render(t, a, Options{Title: hostile})
	if strings.Contains(html, hostile) {
		t.Fatalf("the hostile string appears unescaped")
	}
	for _, bad := range []string{"<img src=x", "<img src=\"x\"", "onerror=alert(1)>"} {
		if strings.Contains(html, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	// Exactly our own script elements, each closed by its own tag.
	if n := strings.Count(strings.ToLower(html), "<script"); n != 4 {
		t.Errorf("%d <script tags, want 4", n)
	}
	if n := strings.Count(strings.ToLower(html), "</script"); n != 4 {
		t.Errorf("%d </script tags, want 4", n)
	}
	if strings.Contains(html, "<!--") {
		t.Errorf("page contains <!--, which changes how script elements are parsed")
	}
	// It shows as text where text is shown...
	if !strings.Contains(html, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the hostile text is not shown, escaped, in the page")
	}
	// ...and stays data inside the JSON: names survive intact.
	var specs []chartSpec
	if err := json.Unmarshal([]byte(scriptBody(t, html, "ceiling-charts")), &specs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range specs {
		if strings.Contains(string(s.Option), `\u003c/script\u003e\u003cimg`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the hostile series name did not reach the chart options")
	}
}

func TestScriptJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"</script>"`, `"\u003c/script\u003e"`},
		{`"<!--<script>"`, `"\u003c!--\u003cscript\u003e"`},
		{"\"a\u2028b\u2029\"", `"a\u2028b\u2029"`},
		{`{"a":1}`, `{"a":1}`},
	}
	for _, tt := range tests {
		got := string(scriptJSON([]byte(tt.in)))
		if got != tt.want {
			t.Errorf("scriptJSON(%q) = %q, want %q", tt.in, got, tt.want)
		}
		var a, b any
		if json.Unmarshal([]byte(tt.in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil {
			t.Errorf("scriptJSON(%q) changed the JSON's validity", tt.in)
		}
	}
}

func TestNulls(t *testing.T) {
	tests := []struct {
		name string
		a    *analyze.Analysis
		want []string
	}{
		{"no runs", &analyze.Analysis{Schema: analyze.Schema}, []string{"the analysis holds no runs"}},
		{"zero levels", fixtureEmpty(0), []string{"no analyzed levels", "No charts"}},
		{"no ceiling, no capacity, no fit", fixtureEmpty(3), []string{
			"No ceiling found in valid data up to 4 concurrent requests", "KV cache capacity unknown", "Memory budget per GPU unknown",
			"No per-request timeline", "No server metrics were recorded", "No inter-token latency histogram", "No TPOT statistics"}},
		{"run without model or source", &analyze.Analysis{Runs: []analyze.Run{{}}}, []string{"Capacity report: run 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			html := render(t, tt.a, Options{})
			for _, w := range tt.want {
				if !strings.Contains(html, w) {
					t.Errorf("page lacks %q", w)
				}
			}
		})
	}
	if err := Write(io.Discard, nil, Options{}); err == nil {
		t.Errorf("Write(nil) succeeded")
	}
}

func TestVerdict(t *testing.T) {
	r := fixtureRun("m", "m.parquet", 8, 10, 1, 1)
	tests := []struct {
		binding string
		c       float64
		want    string
	}{
		{"kv", 64, "Realistic ceiling: 64 concurrent requests, bound by the KV cache (275 requests of this workload fit); throughput knee at 48"},
		{"batch", 40, "bound by the server's batch limit"},
		{"slo", 32.5, "Realistic ceiling: 32.5 concurrent requests, bound by the latency targets (TTFT p99 ≤ 2 s, TPOT p99 ≤ 50 ms)"},
		{"knee", 48, "at the throughput knee"},
	}
	for _, tt := range tests {
		r.Ceiling = analyze.Ceiling{Concurrency: f64(tt.c), Binding: tt.binding}
		got, found := verdict(&r)
		if !found || !strings.HasPrefix(got, "Realistic ceiling") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: verdict %q, want it to contain %q", tt.binding, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{fmtNum(1234567.4), "1,234,567"}, {fmtNum(12.34), "12.3"}, {fmtNum(1.234), "1.23"}, {fmtNum(0.01234), "0.012"}, {fmtNum(0), "0"},
		{fmtDur(0.0004), "0.4 ms"}, {fmtDur(0.0456), "45.6 ms"}, {fmtDur(0.208), "208 ms"}, {fmtDur(2), "2 s"}, {fmtDur(1234), "1,234 s"},
		{fmtConc(48), "48"}, {fmtConc(47.5), "47.5"}, {fmtInt(-1234), "-1,234"}, {fmtGiB(80 << 30), "80 GiB"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestSize checks the budget: a 10-level run with 500 requests per level
// fits in 600 KB.
func TestSize(t *testing.T) {
	html := render(t, fixture(10, 500), Options{})
	const limit = 600 << 10
	t.Logf("10 levels × 500 requests: %d bytes (%d KB, limit %d KB); two runs: %d KB",
		len(html), len(html)>>10, limit>>10, len(render(t, fixtureTwo(10, 500), Options{}))>>10)
	if len(html) > limit {
		t.Errorf("report is %d bytes, over the %d limit", len(html), limit)
	}
}

// TestEchartsAsset checks that the embedded library is the vendored, checksummed one.
func TestEchartsAsset(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(echartsGz))
	if err != nil {
		t.Fatal(err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	want := ""
	f, err := os.Open("assets/echarts/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 4 && fs[0] == "echarts.common.min.js" {
			want = fs[3]
		}
	}
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("embedded echarts sha256 %s, VERSIONS says %s", got, want)
	}
	for _, lic := range []string{"LICENSE", "NOTICE", "LICENSE-zrender", "LICENSE-d3"} {
		if _, err := os.Stat(filepath.Join("assets/echarts", lic)); err != nil {
			t.Errorf("licence file missing: %v", err)
		}
	}
}

// TestGolden compares a small report with testdata/small.html; the chart library is
// replaced by a placeholder so the golden file stays readable. Run with -update
// after an intended change and review the diff.
func TestGolden(t *testing.T) {
	a := fixtureTwo(3, 12)
	for i := range a.Runs {
		for k := range a.Runs[i].Metrics {
			a.Runs[i].Metrics[k].Points = a.Runs[i].Metrics[k].Points[:12] // keep the file reviewable
		}
		for k := range a.Runs[i].Levels {
			h := a.Runs[i].Levels[k].ITLHistogram
			h.Edges, h.Counts = h.Edges[:7], h.Counts[:6]
		}
	}
	html := render(t, a, Options{Tool: "ceiling golden", MaxTimelineRequests: 8})
	lib := scriptBody(t, html, "ceiling-echarts-gz")
	html = strings.Replace(html, lib, `"(echarts 5.4.3, gzip, base64)"`, 1)
	path := filepath.Join("testdata", "small.html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update)", err)
	}
	if html != string(want) {
		i := 0
		for i < len(html) && i < len(want) && html[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Errorf("page differs from %s at byte %d:\n got …%.160s\nwant …%.160s\n(run go test -run TestGolden -update and review the diff)", path, i, html[lo:], string(want[lo:]))
	}
}

func BenchmarkWrite(b *testing.B) {
	a := fixture(10, 500)
	var n int
	for b.Loop() {
		var buf bytes.Buffer
		if err := Write(&buf, a, Options{}); err != nil {
			b.Fatal(err)
		}
		n = buf.Len()
	}
	b.ReportMetric(float64(n), "bytes/report")
}

// TestErrorsTable: each level's failures are listed by kind with the server's own
// message and the count, in the evidence.
func TestErrorsTable(t *testing.T) {
	a := fixture(4, 40)
	a.Runs[0].Levels[3].ErrorKinds = map[string]int{analyze.KindKVExhausted: 41}
	a.Runs[0].Levels[3].ErrorGroups = []analyze.ErrorGroup{{Kind: analyze.KindKVExhausted, Message: "server error: Context size has been exceeded.", Count: 41}}
	page := render(t, a, Options{})
	for _, want := range []string{"What the server said when requests failed", "<td>kv_exhausted</td><td>41</td><td>server error: Context size has been exceeded.</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if page := render(t, fixture(4, 40), Options{}); strings.Contains(page, "What the server said") {
		t.Errorf("a run without failures has an errors table")
	}
}

// TestFirstScreenOnlyValidLevels: in every kind of report (one run, a comparison, an
// open-loop run) the first screen's figures never come from an invalid level: the
// highest-throughput level is made invalid and given a figure that must not appear.
func TestFirstScreenOnlyValidLevels(t *testing.T) {
	poison := func(r *analyze.Run) {
		i := len(r.Levels) - 1
		r.Levels[i].Valid, r.Levels[i].InvalidReason = false, "arrival-limited"
		r.Levels[i].OutputTokS = 987654
		r.Levels[i].TTFT.P99 = f64(42.4242)
	}
	for name, a := range map[string]*analyze.Analysis{"single": fixture(6, 200), "compare": fixtureTwo(6, 200), "rate": fixtureRate()} {
		for i := range a.Runs {
			poison(&a.Runs[i])
		}
		page := render(t, a, Options{})
		top := page[strings.Index(page, `id="summary"`):]
		if j := strings.Index(top, `class="toc"`); j > 0 {
			top = top[:j]
		}
		for _, bad := range []string{"987,654", "987654", "42.4 s", "42.42"} {
			if strings.Contains(top, bad) {
				t.Errorf("%s: first screen shows %q from an invalid level", name, bad)
			}
		}
	}
}
