package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
	"github.com/spf13/pflag"
)

// Issue 31 item 1: credentials in --gpu-metrics-url (user:pass@ and a ?token=
// query) were stored verbatim in the trace's config, the metrics sidecar and the
// report, while --url's and --metrics-url's were stripped. Every URL flag follows
// one rule. A run is recorded against the test engine with a GPU exporter whose
// URL carries both kinds of credential, and the trace, the sidecar, the report,
// the analysis and everything printed are searched for them; the exporter seeing
// the password proves the URL was used as given.
func TestGPUMetricsURLCredentialsNeverStored(t *testing.T) {
	const user, pass, token = "gpuuser", "gpu-pass-5150", "gpu-token-8086"
	var authorized atomic.Int64
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); ok && u == user && p == pass && r.URL.Query().Get("token") == token {
			authorized.Add(1)
		}
		_, _ = w.Write([]byte("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-0\"} 300\n"))
	}))
	defer exporter.Close()
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	gpuURL := strings.Replace(exporter.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/metrics?token=" + token
	dir := t.TempDir()
	out := filepath.Join(dir, "run.parquet")
	stderr := mustRecord(t, "--url", eng.URL(), "--gpu-metrics-url", gpuURL, "--concurrency", "1,2", "--requests-per-level", "4",
		"--prompt-tokens", "20", "--output-tokens", "4", "--scrape-interval", "50ms", "-o", out)
	if authorized.Load() == 0 {
		t.Fatal("the exporter was never scraped with the URL's credentials: the test proves nothing")
	}
	html := filepath.Join(dir, "report.html")
	code, _, reportErr := runCLI("report", out, "-o", html)
	if code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, reportErr)
	}
	code, analysis, analyzeErr := runCLI("analyze", out, "--format", "json")
	if code != exitOK {
		t.Fatalf("analyze: exit %d\n%s", code, analyzeErr)
	}
	outputs := map[string]string{"record's stderr": stderr, "report's stderr": reportErr, "analysis": analysis + analyzeErr}
	for name, path := range map[string]string{"trace": out, "sidecar": trace.MetricsPath(out), "report": html} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outputs[name] = string(b)
	}
	info, err := trace.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Config["gpu-metrics-url"], exporter.Listener.Addr().String()) {
		t.Errorf("the stored config's gpu-metrics-url %q does not name the exporter: the rule drops more than credentials", info.Config["gpu-metrics-url"])
	}
	for name, s := range outputs {
		for _, secret := range []string{pass, token, user + ":"} {
			if strings.Contains(s, secret) {
				t.Errorf("the %s holds %q", name, secret)
			}
		}
	}
}

// TestEveryURLFlagStoredWithoutCredentials checks the rule on each URL flag of
// record, found by name (url or *-url), so a URL flag added later follows it too.
func TestEveryURLFlagStoredWithoutCredentials(t *testing.T) {
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	fs.String("url", "", "")
	fs.String("metrics-url", "", "")
	fs.StringArray("gpu-metrics-url", nil, "")
	fs.String("model", "", "")
	for _, a := range []string{"--url", "--metrics-url", "--gpu-metrics-url", "--gpu-metrics-url"} {
		if err := fs.Set(strings.TrimPrefix(a, "--"), "https://u:secret-pw@host:9400/metrics?token=secret-tok#frag"); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Set("model", "user:pass@not-a-url?keep"); err != nil {
		t.Fatal(err)
	}
	got := givenConfig(fs)
	for _, k := range []string{"url", "metrics-url", "gpu-metrics-url"} {
		if v := got[k]; strings.Contains(v, "secret") || !strings.Contains(v, "host:9400/metrics") {
			t.Errorf("%s stored as %q: want the URL without its credentials", k, v)
		}
	}
	if got["gpu-metrics-url"] != "[https://host:9400/metrics,https://host:9400/metrics]" {
		t.Errorf("gpu-metrics-url stored as %q: want each value stripped, in the flag's own list form", got["gpu-metrics-url"])
	}
	if got["model"] != "user:pass@not-a-url?keep" {
		t.Errorf("model stored as %q: a flag that takes no URL is stored as given", got["model"])
	}
}

// A repeated URL flag survives a config: --config-from a trace recorded with two
// --gpu-metrics-url (stored as [a,b]) and a --config file's list both give the
// flag its two values; each was read as one malformed URL before.
func TestGPUMetricsURLsFromConfig(t *testing.T) {
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\n"))
	}))
	defer exporter.Close()
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm"})
	defer eng.Close()
	// Two names of one exporter: two nodes as far as the recorder can tell.
	urls := []string{exporter.URL + "/metrics", strings.Replace(exporter.URL, "127.0.0.1", "localhost", 1) + "/metrics"}
	dir := t.TempDir()
	first := filepath.Join(dir, "first.parquet")
	short := []string{"--concurrency", "1", "--requests-per-level", "2", "--prompt-tokens", "20", "--output-tokens", "4"}
	mustRecord(t, append([]string{"--url", eng.URL(), "--gpu-metrics-url", urls[0], "--gpu-metrics-url", urls[1], "-o", first}, short...)...)
	yaml := writeConfig(t, "sweep.yaml", "gpu-metrics-url: ["+urls[0]+", "+urls[1]+"]\n")
	for name, args := range map[string][]string{
		"--config-from a trace": {"--config-from", first},
		"--config list":         append([]string{"--config", yaml}, short...),
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "again.parquet")
			mustRecord(t, append(args, "--url", eng.URL(), "-o", out)...)
			info, err := trace.ReadInfo(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Server.GPUMetricsURLs; len(got) != 2 || got[0] != urls[0] || got[1] != urls[1] {
				t.Errorf("GPU exporters %q, want %q", got, urls)
			}
		})
	}
}
