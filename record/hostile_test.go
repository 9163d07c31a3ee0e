package record

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ceiling-llm/ceiling/record/enginetest"
	"github.com/ceiling-llm/ceiling/trace"
)

// Items 5, 6, 8, 10, 11, 13, 15: hostile answers are recorded as what they are,
// every string stored is valid UTF-8, and no credential is stored.
func TestHostileServerFaults(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed: %s %s reached the other server (Authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}))
	t.Cleanup(other.Close) // after the parallel subtests
	tests := []struct {
		fault   enginetest.Fault
		wantErr string                          // "" = the request succeeds
		check   func(t *testing.T, r trace.Row) // on the faulted requests' rows
	}{
		{enginetest.FaultEchoAuth, "HTTP 500", nil},
		{enginetest.FaultBadUTF8, "bad byte", nil},
		{enginetest.FaultRedirect, "HTTP 307", func(t *testing.T, r trace.Row) {
			if !strings.Contains(*r.Error, other.URL) || !strings.Contains(*r.Error, "not followed") {
				t.Errorf("redirect error %q does not name the target %s", *r.Error, other.URL)
			}
		}},
		{enginetest.FaultHTML, "text/html", nil},
		{enginetest.FaultNotStreamed, "JSON", nil},
		{enginetest.FaultGzip, "gzip", nil},
		{enginetest.FaultKeepAlive, "timeout", nil},
		{enginetest.FaultHugeUsage, "", func(t *testing.T, r trace.Row) {
			if r.TokensSource != "chunks" || r.OutputTokens == nil || *r.OutputTokens != 8 {
				t.Errorf("usage of 3e9 tokens stored: output %v (%s), want 8 counted chunks", r.OutputTokens, r.TokensSource)
			}
		}},
		{enginetest.FaultRepeatedUsage, "", nil},
	}
	const key = "sk-secret-123"
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			t.Parallel()
			// vllm: prompts are calibrated with /tokenize, so completion request 0 is
			// the one probe and the sweep's requests 1..9 get every third fault.
			eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", TokenGap: time.Millisecond, RedirectURL: other.URL,
				Fault: func(i int64) enginetest.Fault {
					if i > 0 && i%3 == 0 {
						return tt.fault
					}
					return enginetest.FaultNone
				}})
			defer eng.Close()
			o := baseOptions(t, strings.Replace(eng.URL(), "http://", "http://bob:hunter2@", 1))
			o.Concurrency = []int{2}
			o.RequestsPerLevel = 9
			// Short enough that the keep-alive fault ends quickly, long enough that nine
			// parallel subtests under -race on 2 loaded cores never stall a healthy stream.
			o.Timeout = 2 * time.Second
			var progress bytes.Buffer
			o.Progress = &progress
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := Record(ctx, o); err != nil {
				t.Fatal(err)
			}
			rows, _ := readTrace(t, o.Output)
			log := matchLog(t, rows, eng.Log())
			errs := 0
			for _, r := range rows {
				checkRowUTF8(t, r)
				if tt.check != nil && log[r.RequestID].Fault == tt.fault {
					tt.check(t, r)
				}
				if r.Error == nil {
					if r.OutputTokens == nil || *r.OutputTokens != 8 {
						t.Errorf("row %d: ok but output %v", r.RequestID, r.OutputTokens)
					}
					continue
				}
				errs++
				if tt.wantErr == "" || !strings.Contains(*r.Error, tt.wantErr) {
					t.Errorf("row %d: error %q, want %q", r.RequestID, *r.Error, tt.wantErr)
				}
			}
			if tt.wantErr != "" && errs != 3 {
				t.Errorf("%d error rows, want the 3 faulted", errs)
			}
			if tt.fault == enginetest.FaultHugeUsage && !strings.Contains(progress.String(), "request") {
				t.Errorf("no warning about the usage of 3e9 tokens:\n%s", progress.String())
			}
			noSecrets(t, o.Output, progress.String(), "hunter2", base64.StdEncoding.EncodeToString([]byte("bob:hunter2")), "Basic ", key)
		})
	}
}

func checkRowUTF8(t *testing.T, r trace.Row) {
	t.Helper()
	for _, s := range []*string{&r.RunID, &r.TokensSource, r.FinishReason, r.Error} {
		if s != nil && !utf8.ValidString(*s) {
			t.Errorf("row %d: string %q is not valid UTF-8", r.RequestID, *s)
		}
	}
}

// noSecrets fails when any of secrets is in the trace, its sidecar or the output.
func noSecrets(t *testing.T, path, output string, secrets ...string) {
	t.Helper()
	files := map[string]string{"progress output": output}
	for _, p := range []string{path, trace.MetricsPath(path)} {
		if b, err := os.ReadFile(p); err == nil {
			files[p] = string(b)
		}
	}
	// Parquet pages are compressed: look at the decoded rows too.
	if _, rows, err := trace.ReadFile(path); err == nil {
		var b strings.Builder
		for _, r := range rows {
			if r.Error != nil {
				b.WriteString(*r.Error + "\n")
			}
		}
		files["error column"] = b.String()
	}
	if info, _, err := trace.ReadFile(path); err == nil {
		files["run info"] = info.Target.BaseURL + " " + info.Target.Model + " " + info.Server.Version + " " + info.Server.MetricsURL
	}
	for name, content := range files {
		for _, s := range secrets {
			if s != "" && strings.Contains(content, s) {
				t.Errorf("%s holds the secret %q", name, s)
			}
		}
	}
}

// Item 11: a server that echoes the key into its model id and error texts: the key
// is redacted wherever such a string is stored or shown.
func TestServerStringsRedacted(t *testing.T) {
	const key = "sk-echoed-key-42"
	eng := enginetest.New(enginetest.Config{Model: "model-" + key, Kind: "vllm", APIKey: key, TokenGap: time.Millisecond,
		Fault: func(i int64) enginetest.Fault {
			if i%2 == 1 {
				return enginetest.FaultEchoAuth
			}
			return enginetest.FaultNone
		}})
	defer eng.Close()
	o := baseOptions(t, eng.URL())
	o.APIKey = key
	var progress bytes.Buffer
	o.Progress = &progress
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	if !strings.Contains(info.Target.Model, "[redacted]") {
		t.Errorf("model id stored as %q", info.Target.Model)
	}
	echoed := 0
	for _, r := range rows {
		if r.Error != nil && strings.Contains(*r.Error, "Authorization=") {
			echoed++
		}
	}
	if echoed == 0 {
		t.Fatal("no row holds the echoed header: the test proves nothing")
	}
	noSecrets(t, o.Output, progress.String(), key, "Bearer "+key, base64.StdEncoding.EncodeToString([]byte(key)))
}

// Item 17: a 404 on /v1/models names the 404 and suggests a wrong port or path; a
// 501 HTML page is named, not dumped.
func TestProbeMessages(t *testing.T) {
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	// What python -m http.server answers: GET 404, POST 501, both HTML pages.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html;charset=utf-8")
		code := http.StatusNotFound
		if r.Method == http.MethodPost {
			code = http.StatusNotImplemented
		}
		w.WriteHeader(code)
		w.Write([]byte("<!DOCTYPE HTML>\n<html lang=\"en\"><head><title>Error response</title></head>\n<body><h1>Error response</h1><p>Error code: 501</p></body></html>\n"))
	}))
	defer html.Close()
	tests := []struct {
		name, url, model string
		want             []string
	}{
		{"models 404, no --model", notFound.URL, "", []string{"/v1/models answered HTTP 404", "wrong port"}},
		{"models 404, --model given", notFound.URL, "m", []string{"HTTP 404 at both", "wrong port"}},
		{"501 HTML page", html.URL, "m", []string{"HTTP 501", "Error response"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := baseOptions(t, tt.url)
			o.Model = tt.model
			_, err := Record(context.Background(), o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "<") || strings.Contains(err.Error(), "lists no model") {
				t.Errorf("error %q dumps HTML or misleads", err)
			}
		})
	}
}

// A probe request that fails in a way that may pass (429, 500, a stream cut short)
// is sent again, and the sweep records once one succeeds, its progress saying so;
// one that fails every time ends the run naming every attempt; a refusal (401)
// is not retried.
func TestProbeRetriesPassingFailures(t *testing.T) {
	flaky := enginetest.New(enginetest.Config{Model: "m", Fault: func(i int64) enginetest.Fault {
		switch i {
		case 0:
			return enginetest.FaultTooManyRequests
		case 1:
			return enginetest.FaultResetMidStream
		}
		return enginetest.FaultNone
	}})
	defer flaky.Close()
	var progress strings.Builder
	o := baseOptions(t, flaky.URL())
	o.Model, o.Progress = "m", &progress
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("a server whose first two requests failed: %v", err)
	}
	if got := strings.Count(progress.String(), "probe request failed"); got != 2 {
		t.Errorf("progress names %d failed probe requests, want 2:\n%s", got, progress.String())
	}

	down := enginetest.New(enginetest.Config{Model: "m", Fault: func(int64) enginetest.Fault { return enginetest.FaultInternal }})
	defer down.Close()
	o = baseOptions(t, down.URL())
	o.Model = "m"
	_, err := Record(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "the last of 3 attempts") || strings.Count(err.Error(), "HTTP 500") != 3 {
		t.Errorf("a server that always fails: %v, want the 3 attempts named", err)
	}

	var calls atomic.Int64
	refusing := enginetest.New(enginetest.Config{Model: "m", Fault: func(int64) enginetest.Fault {
		calls.Add(1)
		return enginetest.FaultUnauthorized
	}})
	defer refusing.Close()
	o = baseOptions(t, refusing.URL())
	o.Model = "m"
	if _, err := Record(context.Background(), o); err == nil || calls.Load() != 1 {
		t.Errorf("a 401: %v after %d requests, want one request and an error", err, calls.Load())
	}
}
