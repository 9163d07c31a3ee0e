package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// authLog is a test server that notes the Authorization header of every request.
type authLog struct {
	*httptest.Server
	hits atomic.Int64
	auth atomic.Value // string: the last Authorization seen
}

func newAuthLog(t *testing.T, h http.HandlerFunc) *authLog {
	a := &authLog{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.hits.Add(1)
		a.auth.Store(r.Header.Get("Authorization"))
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *authLog) lastAuth() string { s, _ := a.auth.Load().(string); return s }

// Item 9: the key goes only to --url's exact scheme, host and port, parsed.
func TestFetchSendsKeyOnlyToOrigin(t *testing.T) {
	const key = "sk-origin-only"
	other := newAuthLog(t, nil)
	u, _ := url.Parse(other.URL)
	// A base URL whose string is a prefix of the other server's (port 4123 of 41234).
	prefixBase := "http://127.0.0.1:" + u.Port()[:len(u.Port())-1]
	own := newAuthLog(t, nil)
	tests := []struct {
		name, base, fetch string
		srv               *authLog
		wantKey           bool
	}{
		{"own origin", own.URL, own.URL + "/metrics", own, true},
		{"port prefix", prefixBase, other.URL + "/metrics", other, false},
		{"userinfo trick", own.URL, "http://" + strings.TrimPrefix(own.URL, "http://") + "@" + strings.TrimPrefix(other.URL, "http://") + "/metrics", other, false},
		{"other port", own.URL, other.URL + "/metrics", other, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Options{BaseURL: tt.base, APIKey: key})
			if err != nil {
				t.Fatal(err)
			}
			before := tt.srv.hits.Load()
			_, _ = c.Fetch(context.Background(), tt.fetch, 1<<20)
			if tt.srv.hits.Load() == before {
				t.Fatalf("%s was not fetched", tt.fetch)
			}
			if got := strings.Contains(tt.srv.lastAuth(), key); got != tt.wantKey {
				t.Errorf("fetch %s with --url %s: key sent %v (Authorization %q), want %v", tt.fetch, tt.base, got, tt.srv.lastAuth(), tt.wantKey)
			}
		})
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"http://h:80/x", "http://H/y", true},
		{"https://h/x", "https://h:443", true},
		{"http://h:8000", "http://h:80001", false},
		{"http://h:8000", "https://h:8000", false},
		{"http://127.0.0.1:1871@localhost:18712", "http://127.0.0.1:1871", false},
	}
	for _, tt := range tests {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := SameOrigin(a, b); got != tt.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// Item 10: a completion request is never redirected; the error names the
// redirect and its target without credentials.
func TestDoDoesNotFollowRedirects(t *testing.T) {
	target := newAuthLog(t, nil)
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			src := newAuthLog(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, strings.Replace(target.URL, "http://", "http://eve:pw@", 1)+r.URL.Path+"?token=x", code)
			})
			c, err := New(Options{BaseURL: src.URL, APIKey: "sk-redirect", Model: "m", Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Do(context.Background(), Prompt{Text: "hi"}, 4)
			if target.hits.Load() != 0 {
				t.Fatalf("the redirect was followed (Authorization %q)", target.lastAuth())
			}
			if res.Status != code || !strings.Contains(res.Err, target.URL+"/v1/chat/completions") || !strings.Contains(res.Err, "not followed") {
				t.Errorf("status %d, error %q: want %d naming %s", res.Status, res.Err, code, target.URL)
			}
			if strings.Contains(res.Err, "eve") || strings.Contains(res.Err, "token=") {
				t.Errorf("error %q carries the target's credentials", res.Err)
			}
		})
	}
}

// Item 13: a request that keeps sending tokens past --request-timeout ends there.
func TestDoRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for r.Context().Err() == nil {
			_, _ = w.Write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"tok \"}}]}\n\n"))
			_ = rc.Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, Model: "m", Timeout: time.Second, RequestTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := c.Do(context.Background(), Prompt{Text: "hi"}, 4)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	if !strings.Contains(res.Err, "request timeout") || res.ContentChunks < 5 {
		t.Errorf("error %q after %d chunks, want a request timeout", res.Err, res.ContentChunks)
	}
}

// Item 17: an HTML error page is named by its title, not dumped.
func TestHTTPErrorTextHTML(t *testing.T) {
	body := []byte("<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body><h1>Error response</h1><p>Error code: 501</p></body></html>")
	got := httpErrorText(501, "text/html;charset=utf-8", body)
	if strings.Contains(got, "<") || !strings.Contains(got, "HTTP 501") || !strings.Contains(got, "Error response") {
		t.Errorf("got %q", got)
	}
}

// Item 8: Basic credentials from the URL, as sent or decoded, and any echoed
// Authorization value are redacted.
func TestRedactAuthorization(t *testing.T) {
	c, err := New(Options{BaseURL: "http://bob:hunter2@h:1", APIKey: "sk-k3y-value"})
	if err != nil {
		t.Fatal(err)
	}
	in := "echo: Authorization=Basic Ym9iOmh1bnRlcjI= bob:hunter2 Bearer sk-k3y-value Basic c29tZW9uZTplbHNl"
	got := c.Redact(in)
	for _, s := range []string{"Ym9iOmh1bnRlcjI=", "hunter2", "sk-k3y-value", "c29tZW9uZTplbHNl"} {
		if strings.Contains(got, s) {
			t.Errorf("Redact(%q) = %q keeps %q", in, got, s)
		}
	}
}
