package sse

import (
	"io"
	"testing"
	"time"
)

// Issue 18 item 11: events framed with CR alone (the SSE spec allows CR, LF and
// CRLF) are returned as they arrive, not when the stream ends. The stream is a
// pipe written one event at a time: each event must be read before the next one is
// written, so a reader that waits for an LF (or for the end) blocks the writer and
// the test sees fewer events than were written. A CRLF pair split across two
// writes is one line end, not two.
func TestCROnlyEventsReturnedAsTheyArrive(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string // data of each event, in order
	}{
		{"CR", []string{"data: a\r\r", "data: b\r\r", "data: [DONE]\r\r"}, []string{"a", "b", "[DONE]"}},
		{"CRLF split between writes", []string{"data: a\r", "\n\r\n", "data: b\r\n\r\n"}, []string{"a", "b"}},
		{"mixed", []string{"data: a\n\n", "data: b\r\r", ": keep-alive\r", "data: c\r\n\r\n"}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			r := NewReader(pr)
			var got []string
			// A write to a pipe returns once the reader took all of it; a reader that
			// waits for more than the event (an LF that never comes) leaves the write
			// unread and the event not returned until the stream ends.
			events := make(chan string)
			go func() {
				for {
					_, data, err := r.Next()
					if err != nil {
						close(events)
						return
					}
					events <- string(data)
				}
			}()
			for i, w := range tt.writes {
				if _, err := pw.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
				// Every event completed by the writes so far must be out now.
				for len(got) < completed(tt.writes[:i+1], tt.want) {
					select {
					case e := <-events:
						got = append(got, e)
					case <-time.After(10 * time.Second): // a hang guard, not a timing
						t.Fatalf("after write %d (%q) the reader still holds event %d: it waits for more than the event", i, w, len(got))
					}
				}
			}
			pw.Close()
			for e := range events {
				got = append(got, e)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// completed is how many of the wanted events the writes so far have ended (each
// want is ended by the write holding its blank line: counted by the test's data).
func completed(writes, want []string) int {
	n := 0
	for _, w := range writes {
		for _, end := range []string{"\r\r", "\n\n", "\r\n\r\n", "\n\r\n"} {
			if len(w) >= len(end) && w[len(w)-len(end):] == end {
				n++
				break
			}
		}
	}
	return min(n, len(want))
}
