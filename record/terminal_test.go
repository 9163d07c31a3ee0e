package record

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/analyze"
	"github.com/ceiling-llm/ceiling/analyze/analysistext"
	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// hostileText holds every kind of character that acts on a terminal rather than
// printing: an OSC title, a CSI screen clear, a carriage return that overwrites
// the line, DEL, C1 CSI and OSC, a right-to-left override, an isolate and a mark.
const hostileText = "evil\x1b]0;pwned\x07\x1b[2J\rFAKE LINE\x7f\u009b2J\u009d0;t\u202eexe.txt\u2066\u200f"

// rawControls are the characters of hostileText that must never reach an output.
var rawControls = []string{"\x1b", "\x07", "\r", "\x7f", "\u009b", "\u009d", "\u202e", "\u2066", "\u200f"}

// Issue 31 item 2: record printed the server's model id and error texts raw (an OSC
// set the window title, a CSI cleared the screen; C1 controls, CR and bidi
// overrides passed too) and analyze let the bidi override through. A server whose
// model id, version and error bodies hold hostileText is recorded; the progress
// output, the error and the analysis' text output must hold none of its controls,
// yet still show the rest of what the server said.
func TestServerTextCannotControlTheTerminal(t *testing.T) {
	eng := enginetest.New(enginetest.Config{Model: "m-" + hostileText, Kind: "vllm", Version: "0.1-" + hostileText, TokenGap: time.Millisecond})
	defer eng.Close()
	target, _ := url.Parse(eng.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/completions") {
			switch posts.Add(1) % 4 {
			case 2: // an OpenAI error object whose message holds the controls
				body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": hostileText, "type": "server_error"}})
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write(body)
				return
			case 0: // a plain-text body with the raw bytes
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(hostileText))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()

	o := baseOptions(t, srv.URL)
	var progress bytes.Buffer
	o.Progress = &progress
	_, err := Record(context.Background(), o)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	a, err := analyze.Analyze(context.Background(), []string{o.Output}, analyze.Options{TimelineLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	var text, md, js bytes.Buffer
	if err := analysistext.Write(&text, a, analysistext.FormatText); err != nil {
		t.Fatal(err)
	}
	if err := analysistext.Write(&md, a, analysistext.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if err := analysistext.Write(&js, a, analysistext.FormatJSON); err != nil {
		t.Fatal(err)
	}
	rows, info := readTrace(t, o.Output)
	var stored strings.Builder
	stored.WriteString(info.Target.Model + "\n" + info.Server.Version + "\n")
	failed := 0
	for _, r := range rows {
		if r.Error != nil {
			stored.WriteString(*r.Error + "\n")
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no request failed with the hostile error body: the test proves nothing")
	}
	for name, out := range map[string]string{"record's output": progress.String(), "analyze text": text.String(), "analyze markdown": md.String(), "analyze JSON": js.String(), "the trace's strings": stored.String()} {
		for _, c := range rawControls {
			if strings.Contains(out, c) {
				t.Errorf("%s holds the raw control %q:\n%q", name, c, out)
			}
		}
		if !strings.Contains(out, "pwned") {
			t.Errorf("%s does not show what the server said (escaped):\n%q", name, out)
		}
	}
	if !strings.Contains(progress.String(), `m-evil\x1b]0;pwned\x07`) {
		t.Errorf("the model id is not shown with visible escapes:\n%s", progress.String())
	}
}
