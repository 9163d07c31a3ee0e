package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const tokenChunk = "data: {\"choices\":[{\"delta\":{\"content\":\"tok \"}}]}\n\n"

// Issue 18 item 7: a server that keeps streaming past max_tokens no longer grows
// the request's memory without bound: the chunks kept (one gap each) and the text
// kept are bounded by a generous multiple of max_tokens, and the request ends with
// a named error. The bound is checked on what is kept (the gaps, the text), not on
// time or on the process's memory.
func TestStreamPastMaxTokensBounded(t *testing.T) {
	const maxTokens, sent = 4, 50000
	big := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", 60000) + "\"}}]}\n\n"
	tests := []struct {
		name     string
		chunk    string
		keepText bool
	}{
		{"many chunks", tokenChunk, false},
		{"huge text kept", big, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < sent && r.Context().Err() == nil; i++ {
					if _, err := w.Write([]byte(tt.chunk)); err != nil {
						return
					}
				}
				w.Write([]byte("data: [DONE]\n\n"))
			}))
			defer srv.Close()
			c, err := New(Options{BaseURL: srv.URL, Model: "m", Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Do(context.Background(), Prompt{Text: "hi", KeepText: tt.keepText}, maxTokens)
			lim := keptLimits(maxTokens)
			if !strings.Contains(res.Err, ErrPastMaxTokens.Error()) {
				t.Errorf("error %q, want %q", res.Err, ErrPastMaxTokens)
			}
			if len(res.GapsUs) > lim.chunks || res.ContentChunks > lim.chunks+1 {
				t.Errorf("kept %d gaps of %d chunks, above the bound of %d", len(res.GapsUs), res.ContentChunks, lim.chunks)
			}
			if n := textLen(res.text); n > lim.textBytes+len(tt.chunk) {
				t.Errorf("kept %d bytes of text, above the bound of %d", n, lim.textBytes)
			}
		})
	}
}

// Issue 18 item 12: a stream that sends its finish_reason (and usage) but neither
// [DONE] nor a close is complete after a short grace, not a stall after --timeout.
func TestFinishWithoutDoneOrClose(t *testing.T) {
	for _, withUsage := range []bool{true, false} {
		t.Run(fmt.Sprintf("usage %v", withUsage), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				rc := http.NewResponseController(w)
				w.Write([]byte(tokenChunk + tokenChunk))
				w.Write([]byte("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"))
				if withUsage {
					w.Write([]byte("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n"))
				}
				rc.Flush()
				<-r.Context().Done() // neither [DONE] nor a close
			}))
			defer srv.Close()
			c, err := New(Options{BaseURL: srv.URL, Model: "m", Timeout: 4 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			res := c.Do(context.Background(), Prompt{Text: "hi"}, 4)
			if res.Err != "" || res.Finish != "stop" || res.ContentChunks != 2 {
				t.Errorf("error %q, finish %q, %d chunks: want a complete request (stop, 2 chunks)", res.Err, res.Finish, res.ContentChunks)
			}
			if withUsage && (res.Usage == nil || res.Usage.CompletionTokens == nil || *res.Usage.CompletionTokens != 2) {
				t.Errorf("usage %+v, want the usage chunk sent after the finish", res.Usage)
			}
		})
	}
}
