package record

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-llm/ceiling/record/enginetest"
)

// Issue 18 item 16: connection messages say what happened. An HTTP/2-only server
// is named as such, not as refusing an API key none was sent; a self-signed
// certificate names --insecure; a redirect of /v1/models names its target; a
// 403 with no key sent does not say a key was refused.
func TestConnectionMessagesSayWhatHappened(t *testing.T) {
	// An HTTP/2-only server (h2c, prior knowledge) answers an HTTP/1.1 request with
	// its SETTINGS frame and a GOAWAY, and closes.
	h2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	go func() {
		for {
			c, err := h2.Accept()
			if err != nil {
				return
			}
			// Read the request first: frames written before it arrive on an idle
			// connection, which the transport reports as unsolicited bytes instead.
			_, _ = c.Read(make([]byte, 4096))
			c.Write([]byte("\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64\x00\x04\x00\x10\x00\x00\x00\x06\x00\x00\x40\x00"))
			c.Write([]byte("\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
			time.Sleep(50 * time.Millisecond)
			c.Close()
		}
	}()
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	elsewhere := "http://127.0.0.1:9/somewhere-else"
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "HTTP/1.1 is not allowed here", http.StatusForbidden)
	}))
	defer forbidden.Close()
	tests := []struct {
		name, url string
		want      []string
		notWant   string
	}{
		{"http/2 only", "http://" + h2.Addr().String(), []string{"HTTP/2"}, "API key"},
		{"self-signed certificate", tlsSrv.URL, []string{"--insecure"}, ""},
		{"redirected model list", redirect.URL, []string{elsewhere + "/v1/models"}, ""},
		{"403 with no key sent", forbidden.URL, []string{"no API key was sent"}, "refused the API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := baseOptions(t, tt.url)
			_, err := Record(context.Background(), o)
			if err == nil {
				t.Fatal("recorded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error %q says %q", err, tt.notWant)
			}
		})
	}
}

// Issue 18 item 16, last part: a failed final merge says to use --resume, and
// --resume then writes the trace. The merge fails because a directory appeared
// at the output's path while the last level ran.
func TestFailedMergeSaysResume(t *testing.T) {
	var o Options
	var once sync.Once
	eng := enginetest.New(enginetest.Config{Model: "m", Kind: "vllm", Fault: func(i int64) enginetest.Fault {
		if i >= 6 { // a request of the last level (the probe is request 0)
			once.Do(func() { os.Mkdir(o.Output, 0o755) })
		}
		return enginetest.FaultNone
	}})
	defer eng.Close()
	o = baseOptions(t, eng.URL())
	_, err := Record(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "Options.Resume") {
		t.Fatalf("a failed merge: %v, want an error that says to use --resume", err)
	}
	if err := os.Remove(o.Output); err != nil {
		t.Fatal(err)
	}
	o.Resume = true
	if _, err := Record(context.Background(), o); err != nil {
		t.Fatalf("--resume after the failed merge: %v", err)
	}
	rows, info := readTrace(t, o.Output)
	if len(rows) != 8 || len(info.Levels) != 2 {
		t.Errorf("after --resume: %d rows, %d levels; want 8 and 2", len(rows), len(info.Levels))
	}
}
