package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/sse"
)

// Prompt is one request's input: a completions prompt or chat messages.
type Prompt struct {
	Text     string            // completions prompt, or the single user message for chat
	Messages []json.RawMessage // chat messages from a dataset (used as given)
	// MaxTokens overrides the run's --output-tokens when > 0 (dataset lines).
	MaxTokens int
	// TargetTokens is the prompt length the workload aimed at (0 when unknown).
	TargetTokens int
	// RequestID is sent as the X-Request-Id header, so that a row of the trace can be
	// found in the server's own logs ("" = no header).
	RequestID string
	// KeepText collects the answer text in Result.Text (a conversation's next turn
	// sends it back).
	KeepText bool
	// MinTokens, when set, is sent as min_tokens = max_tokens (vLLM, SGLang), so
	// the output length is the one asked for even when the model would stop.
	MinTokens bool
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type completionRequest struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages,omitempty"`
	Prompt        *string           `json:"prompt,omitempty"`
	MaxTokens     int               `json:"max_tokens"`
	Stream        bool              `json:"stream"`
	StreamOptions streamOptions     `json:"stream_options"`
	IgnoreEOS     bool              `json:"ignore_eos,omitempty"`
	MinTokens     int               `json:"min_tokens,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
}

// body encodes the request for p.
func (c *Client) body(p Prompt, maxTokens int) ([]byte, error) {
	q := completionRequest{
		Model:         c.opts.Model,
		MaxTokens:     maxTokens,
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		IgnoreEOS:     c.opts.IgnoreEOS,
	}
	if p.MinTokens {
		q.MinTokens = maxTokens
	}
	if c.opts.Endpoint == "completions" {
		text := p.Text
		if len(p.Messages) > 0 {
			return nil, errors.New("a dataset line with messages needs Options.Endpoint chat")
		}
		q.Prompt = &text
	} else if len(p.Messages) > 0 {
		q.Messages = p.Messages
	} else {
		m, err := json.Marshal(chatMessage{Role: "user", Content: p.Text})
		if err != nil {
			return nil, err
		}
		q.Messages = []json.RawMessage{m}
	}
	return json.Marshal(q)
}

// Result is what one streamed request measured. Times are Unix nanoseconds; zero
// means "did not happen".
type Result struct {
	SentNs         int64
	FirstTokenNs   int64
	FirstContentNs int64
	EndNs          int64
	GapsUs         []int32
	ContentChunks  int
	ReasoningChunk int
	Usage          *sse.Usage
	Status         int
	Finish         string
	Err            string
	// text collects the answer, when the prompt asked for it (Prompt.KeepText).
	text *strings.Builder
	// Conn is true when the request failed before any HTTP response (dial refused,
	// reset before headers): the server may be gone.
	Conn bool
	// ClientLimit is true when the request failed because this process ran out of
	// file descriptors (EMFILE, ENFILE): the client's limit, not the server's.
	ClientLimit bool
	// Streamed is true when a 2xx answer was an SSE stream (not an HTML page, a
	// JSON body or a compressed one): a failure then came inside the stream.
	Streamed bool
}

// Do sends one streaming request and measures it. ctx cancels it (the row then says
// "cancelled"). It never returns an error: failures are described in Result.Err.
func (c *Client) Do(ctx context.Context, p Prompt, maxTokens int) Result {
	var res Result
	start := time.Now()
	body, err := c.body(p, maxTokens)
	if err != nil {
		res.SentNs, res.EndNs = start.UnixNano(), start.UnixNano()
		res.Err = c.sanitize("building request: " + err.Error())
		return res
	}

	var lastRead atomic.Int64
	lastRead.Store(start.UnixNano())
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The stall watchdog: fail the request once nothing arrived for the timeout.
	timeout := c.opts.Timeout
	watchdog := afterQuiet(&lastRead, timeout, func() { cancel(errStalled) })
	defer watchdog.Stop()
	if c.opts.RequestTimeout > 0 {
		limit := time.AfterFunc(c.opts.RequestTimeout, func() { cancel(errRequestTimeout) })
		defer limit.Stop()
	}

	var sent atomic.Int64
	ct := &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(time.Now().UnixNano()) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(rctx, ct), http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		res.SentNs, res.EndNs = start.UnixNano(), start.UnixNano()
		res.Err = c.sanitize("building request: " + err.Error())
		return res
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if p.RequestID != "" {
		req.Header.Set("X-Request-Id", p.RequestID)
	}
	// Marks the POST as replayable (the nil value is not sent): when the server has
	// closed an idle keep-alive connection just as it is reused, net/http resends
	// the request on a fresh connection instead of failing it. It only does so when
	// the server cannot have seen the request, so nothing is generated twice.
	req.Header["X-Idempotency-Key"] = nil
	c.authorize(req)

	resp, err := c.http.Do(req)
	res.SentNs = sent.Load()
	if res.SentNs == 0 {
		res.SentNs = start.UnixNano()
	}
	if err != nil {
		res.EndNs = time.Now().UnixNano()
		if isFileLimit(err) {
			// The client's limit, not the server's: named, and not counted as a
			// server that stopped answering.
			res.Err = c.sanitize(FileLimitText + " (" + err.Error() + "): raise the limit of open files, e.g. ulimit -n 65536 in the shell that runs ceiling, or lower --rate")
			res.ClientLimit = true
			return res
		}
		res.Err = c.sanitize(strings.Replace(c.failure(ctx, rctx, err, timeout), "mid-stream", "before a response", 1))
		res.Conn = ctx.Err() == nil && context.Cause(rctx) != errStalled
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	lastRead.Store(time.Now().UnixNano())
	if resp.StatusCode/100 == 3 {
		res.EndNs = time.Now().UnixNano()
		res.Err = c.sanitize(redirectText(resp))
		return res
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		res.EndNs = time.Now().UnixNano()
		res.Err = c.sanitize(httpErrorText(resp.StatusCode, resp.Header.Get("Content-Type"), msg))
		return res
	}
	if why := notAStream(resp); why != "" {
		res.EndNs = time.Now().UnixNano()
		res.Err = c.sanitize(why)
		return res
	}
	res.Streamed = true

	sr := sse.NewReader(resp.Body)
	if p.KeepText {
		res.text = new(strings.Builder)
	}
	events := 0
	var last, stamped int64 // the last token chunk's time; the same as FirstTokenNs+GapsUs tell it
	limit := keptLimits(maxTokens)
	var finishTimer *time.Timer
	defer func() {
		if finishTimer != nil {
			finishTimer.Stop()
		}
	}()
	for {
		ev, data, err := sr.Next()
		if err != nil {
			now := time.Now().UnixNano()
			if ctx.Err() == nil && context.Cause(rctx) == errFinished {
				res.EndNs = endOr(last, now)
				return res
			}
			if err == io.EOF {
				if res.Finish == "" {
					res.EndNs = endOr(last, now)
					res.Err = "stream ended before a finish_reason"
					if events == 0 {
						res.Err = c.sanitize(fmt.Sprintf("the 200 answer held no SSE event (Content-Type %q)", resp.Header.Get("Content-Type")))
					}
				} else {
					res.EndNs = endOr(last, now)
				}
				return res
			}
			res.EndNs = now
			res.Err = c.sanitize(c.failure(ctx, rctx, err, timeout))
			return res
		}
		ch, derr := sse.Decode(ev, data)
		now := time.Now().UnixNano()
		events++
		if ch.Content || ch.Reasoning || ch.Usage != nil || ch.Finish != "" || ch.Done {
			// Only what carries tokens (or ends the answer) proves progress: SSE
			// comments and empty events sent forever do not keep a request alive.
			lastRead.Store(now)
		}
		if derr != nil {
			res.EndNs = now
			res.Err = c.sanitize(derr.Error())
			return res
		}
		if ch.Content || ch.Reasoning {
			if res.FirstTokenNs == 0 {
				res.FirstTokenNs = now
				stamped = now
			} else {
				// Gaps are whole µs; measuring each from the previous chunk's time
				// as the gaps reconstruct it (not its exact time) keeps the
				// remainder, so FirstTokenNs plus the gaps stays within 1 µs of
				// every chunk's time instead of drifting by up to 1 µs a chunk.
				g := gapUs(now - stamped)
				res.GapsUs = append(res.GapsUs, g)
				stamped += int64(g) * 1000
			}
			if ch.Content {
				if p.KeepText {
					answerText(res.text, data)
				}
				res.ContentChunks++
				if res.FirstContentNs == 0 {
					res.FirstContentNs = now
				}
			} else {
				res.ReasoningChunk++
			}
			last = now
			if n, kept := res.ContentChunks+res.ReasoningChunk, textLen(res.text); n > limit.chunks || kept > limit.textBytes {
				res.EndNs = now
				res.Err = fmt.Sprintf("%v: %d token chunks (%d bytes of text kept) for max_tokens %d, above the %d chunks a request may send; the stream was cut",
					ErrPastMaxTokens, n, kept, maxTokens, limit.chunks)
				return res
			}
		}
		if ch.Usage != nil {
			res.Usage = ch.Usage
		}
		if ch.Finish != "" {
			res.Finish = ch.Finish
			if finishTimer == nil {
				finishTimer = afterQuiet(&lastRead, min(finishGrace, timeout), func() { cancel(errFinished) })
			}
		}
		if ch.Err != "" {
			res.EndNs = now
			res.Err = c.sanitize(ch.Err)
			return res
		}
		if ch.Done {
			res.EndNs = endOr(last, now)
			if res.Finish == "" {
				res.Err = "stream ended ([DONE]) without a finish_reason"
			}
			return res
		}
	}
}

// finishGrace is how long a stream may stay silent after its finish_reason (the
// usage chunk and [DONE] normally follow at once) before the request is complete.
const finishGrace = time.Second

// afterQuiet calls f once nothing token-carrying arrived (lastRead) for quiet.
func afterQuiet(lastRead *atomic.Int64, quiet time.Duration, f func()) *time.Timer {
	var t *time.Timer
	t = time.AfterFunc(quiet, func() {
		idle := time.Duration(time.Now().UnixNano() - lastRead.Load())
		if idle >= quiet {
			f()
			return
		}
		t.Reset(quiet - idle)
	})
	return t
}

func textLen(b *strings.Builder) int {
	if b == nil {
		return 0
	}
	return b.Len()
}

// kept bounds what one request keeps: its token chunks (one gap each) and its
// answer text (conversations).
type kept struct{ chunks, textBytes int }

// keptLimits are generous multiples of max_tokens: a server sends at most about one
// chunk per token (reasoning included), and a token is a few bytes of text.
func keptLimits(maxTokens int) kept {
	return kept{chunks: 8*maxTokens + 1024, textBytes: 256*maxTokens + 1<<20}
}

// FileLimitText begins the error of a request that failed on the client's limit of
// open files.
const FileLimitText = "the client ran out of file descriptors"

// isFileLimit says whether err is this process (EMFILE) or the system (ENFILE)
// running out of file descriptors.
func isFileLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// endOr is the end time of a stream: its last token chunk, else now.
func endOr(last, now int64) int64 {
	if last != 0 {
		return last
	}
	return now
}

// failure describes a transport error: cancelled by the sweep, stalled, or a
// connection problem.
func (c *Client) failure(outer, inner context.Context, err error, timeout time.Duration) string {
	switch {
	case outer.Err() != nil:
		return "cancelled"
	case context.Cause(inner) == errStalled:
		return fmt.Sprintf("timeout: no token for %s (stalled)", timeout)
	case context.Cause(inner) == errRequestTimeout:
		return fmt.Sprintf("request timeout: not finished after %s (--request-timeout)", c.opts.RequestTimeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop "Post URL:" — the URL is in the run info
	}
	msg := err.Error()
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &hostErr):
		return "TLS certificate not trusted: " + msg + " (a self-signed or private certificate: pass --insecure to skip verification, or add its CA to the system's trust store)"
	case strings.Contains(msg, "malformed HTTP response") && strings.Contains(msg, `\x00\x00`):
		// The answer began with binary HTTP/2 frames (a SETTINGS frame): the
		// server speaks HTTP/2 only (h2c with prior knowledge).
		return "the server answered with HTTP/2 frames: it speaks HTTP/2 only, and ceiling speaks HTTP/1.1 (one stream per connection, as the engines' benchmarks do): enable HTTP/1.1 on the server or put a proxy that speaks it in front"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "connection closed mid-stream: " + msg
	case strings.Contains(msg, "connection refused"):
		return "connection refused: " + msg
	case strings.Contains(msg, "connection reset"):
		return "connection reset: " + msg
	}
	return "connection error: " + msg
}

// httpErrorText summarizes a non-2xx response: the status and the server's message
// (an HTML page is reduced to its title: its markup says nothing).
func httpErrorText(status int, contentType string, body []byte) string {
	msg := strings.TrimSpace(string(body))
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) == nil {
		switch {
		case len(e.Error) > 0 && !sse.IsJSONNull(e.Error):
			msg = strings.TrimPrefix(sse.ErrorText(body), "server error: ")
		case e.Message != "":
			msg = e.Message
		case len(e.Detail) > 0:
			msg = string(e.Detail)
		}
	} else if isHTML(contentType, body) {
		msg = "an HTML page"
		if t := htmlTitle(body); t != "" {
			msg += fmt.Sprintf(" titled %q", t)
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	text := fmt.Sprintf("HTTP %d %s", status, http.StatusText(status))
	if msg != "" {
		text += ": " + msg
	}
	return text
}

func isHTML(contentType string, body []byte) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/html") {
		return true
	}
	b := bytes.ToLower(bytes.TrimSpace(body[:min(len(body), 512)]))
	return bytes.HasPrefix(b, []byte("<!doctype html")) || bytes.HasPrefix(b, []byte("<html")) || bytes.HasPrefix(b, []byte("<head"))
}

var titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func htmlTitle(body []byte) string {
	m := titleRE.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return sse.Truncate(strings.Join(strings.Fields(string(m[1])), " "), 80)
}

// redirectText describes a redirect that was not followed: the status and the
// target, without its credentials or query.
func redirectText(resp *http.Response) string {
	text := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if t := redirectTarget(resp); t != "" {
		text += " to " + t
	}
	return text + " (redirects are not followed: point --url at the server that answers)"
}

// redirectTarget is a redirect's Location without its credentials or query ("" if
// none).
func redirectTarget(resp *http.Response) string {
	loc, err := resp.Location()
	if err != nil {
		return ""
	}
	loc.User, loc.RawQuery, loc.Fragment = nil, "", ""
	return loc.String()
}

// notAStream says what a 2xx answer is when it is plainly not an SSE stream: an
// HTML page, a JSON body (a server that ignored stream: true), or a compressed
// body (the client asks for none; a stream must be read as it arrives).
func notAStream(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return fmt.Sprintf("the server sent a %s-encoded body (Content-Encoding: %s) although none was asked for; a compressed stream cannot be timed chunk by chunk: turn compression off in the proxy", enc, enc)
	}
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
	switch {
	case mt == "text/html":
		return fmt.Sprintf("the server answered HTTP %d with an HTML page (Content-Type %s), not an SSE stream: is --url the API server, not a web page or a login proxy?", resp.StatusCode, ct)
	case mt == "application/json":
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if bytes.Contains(body, []byte(`"choices"`)) {
			return fmt.Sprintf("the server answered a non-streaming JSON completion (Content-Type %s) where an SSE stream was asked for (stream: true): it does not stream", ct)
		}
		return fmt.Sprintf("the server answered a JSON body (Content-Type %s) where an SSE stream was expected: %s", ct, sse.Truncate(strings.Join(strings.Fields(string(body)), " "), 200))
	}
	return ""
}

// gapUs converts a gap in nanoseconds to microseconds, saturating at int32.
func gapUs(ns int64) int32 {
	us := ns / 1000
	if us > 1<<31-1 {
		return 1<<31 - 1
	}
	if us < 0 {
		return 0
	}
	return int32(us)
}
