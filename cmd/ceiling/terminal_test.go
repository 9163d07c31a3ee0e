package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 31 item 2, the CLI's side: the model asked for (a bidi override in it) and an
// error that quotes the server (the probe failing on a body full of terminal
// controls) are printed with visible escapes. Before the fix the "probing" line
// printed the model's U+202E raw.
func TestRecordErrorCannotControlTheTerminal(t *testing.T) {
	const hostile = "down\x1b]0;pwned\x07\x1b[2J\rFAKE\u009b2J\u202etxt.exe\u2066"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(hostile))
	}))
	defer srv.Close()
	code, _, stderr := runRecordArgs(nil, "--url", srv.URL, "--concurrency", "1", "--model", "m\u202eevil",
		"-o", filepath.Join(t.TempDir(), "r.parquet"))
	if code == exitOK {
		t.Fatalf("exit 0 against a server that answers 500:\n%s", stderr)
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\u009b", "\u202e", "\u2066"} {
		if strings.Contains(stderr, c) {
			t.Errorf("stderr holds the raw control %q:\n%q", c, stderr)
		}
	}
	if !strings.Contains(stderr, "pwned") && !strings.Contains(stderr, `m\u202eevil`) {
		t.Errorf("stderr shows neither the server's words nor the model, escaped:\n%q", stderr)
	}
}
