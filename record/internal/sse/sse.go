// Package sse reads the Server-Sent Events of an OpenAI-compatible completion stream
// and classifies each event: content, reasoning, finish, usage, error or [DONE]. A
// hand-written decoder handles the common chunk shapes without allocating;
// encoding/json handles the rest.
package sse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"
)

// maxEventBytes bounds one SSE event so that a server that never sends a blank line
// cannot make the recorder buffer without limit.
const maxEventBytes = 16 << 20

// errEventTooLarge is returned when one event exceeds maxEventBytes.
var errEventTooLarge = errors.New("SSE event larger than 16 MiB")

// Reader reads Server-Sent Events (the `text/event-stream` framing) from a
// response body. It understands CR, LF and CRLF line ends (the SSE spec allows all
// three, and a line is returned as soon as its end arrives, whichever it is), `:`
// comment lines, multi-line `data:` fields and the `event:` field, which is all that
// OpenAI-compatible servers use. It allocates only when an event outgrows its
// buffers, so that thousands of concurrent streams stay cheap.
type Reader struct {
	br      *bufio.Reader
	data    []byte // data of the event being assembled, lines joined by '\n'
	hasData bool   // a data field was seen (the data may still be empty)
	event   []byte // value of the last event: field
	line    []byte // the line being read
	// skipLF: the last line ended with a CR, so an LF right after it belongs to
	// that line end (CRLF). It is checked when the next byte arrives, never waited
	// for, so a CR-only stream's line is returned at once.
	skipLF  bool
	pending bool // the stream ended; the next call returns io.EOF
}

// NewReader reads the events of the stream r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 4096)}
}

// next returns the next event's name (empty for the default "message") and data. The
// slices are valid until the following call. At the end of the stream it returns
// io.EOF; an event whose final blank line is missing at EOF is still returned first,
// because real servers end streams without it. Other read errors are returned as is.
func (s *Reader) Next() (event, data []byte, err error) {
	for {
		if s.pending {
			return nil, nil, io.EOF
		}
		line, ended, rerr := s.readLine()
		if rerr != nil && rerr != io.EOF {
			return nil, nil, rerr
		}
		if rerr == io.EOF && !ended {
			// The stream ended, possibly right after this line without its end.
			if len(line) > 0 {
				s.field(line)
			}
			s.pending = true
			if s.hasData {
				return s.dispatch()
			}
			return nil, nil, io.EOF
		}
		if s.field(line) {
			if s.hasData {
				return s.dispatch()
			}
			s.event = s.event[:0] // a blank line ends an event without data: drop it
		}
	}
}

// dispatch returns the assembled event and starts a new one.
func (s *Reader) dispatch() (event, data []byte, err error) {
	data = s.data
	if n := len(data); n > 0 && data[n-1] == '\n' {
		data = data[:n-1]
	}
	// The buffers are reused by later calls, which is why the slices handed out are
	// only valid until then.
	event = s.event
	s.data = s.data[:0]
	s.event = s.event[:0]
	s.hasData = false
	return event, data, nil
}

// field processes one line; it reports whether the line was blank (end of event).
func (s *Reader) field(line []byte) bool {
	if len(line) == 0 {
		return true
	}
	if line[0] == ':' {
		return false // comment (keep-alive)
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "event":
		s.event = append(s.event[:0], value...)
	}
	return false
}

// readLine returns the next line without its end (CR, LF or CRLF), as soon as
// the end has arrived; ended is false when the stream ended first (err is then
// io.EOF). The returned slice is only valid until the next call.
func (s *Reader) readLine() (line []byte, ended bool, err error) {
	s.line = s.line[:0]
	for {
		n := s.br.Buffered()
		if n == 0 {
			// Wait for at least one byte (Peek fills the buffer with what is there).
			if _, err := s.br.Peek(1); err != nil {
				return s.line, false, err
			}
			n = s.br.Buffered()
		}
		buf, _ := s.br.Peek(n)
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				s.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			s.line = append(s.line, buf...)
			s.br.Discard(len(buf))
			if len(s.line)+len(s.data) > maxEventBytes {
				return nil, false, errEventTooLarge
			}
			continue
		}
		s.line = append(s.line, buf[:i]...)
		s.skipLF = buf[i] == '\r'
		s.br.Discard(i + 1)
		if len(s.line)+len(s.data) > maxEventBytes {
			return nil, false, errEventTooLarge
		}
		return s.line, true, nil
	}
}

// Chunk is what one SSE event of a completion stream says, as the recorder needs it.
type Chunk struct {
	Done      bool // the `[DONE]` sentinel
	Content   bool // carries answer text (chat content, completions text, tool calls)
	Reasoning bool // carries reasoning text (reasoning_content / reasoning / thinking)
	// Finish is the finish_reason when this chunk carries one.
	Finish string
	// Usage is set when the chunk carries a usage object (its own chunk, the finish
	// chunk, or every chunk with vLLM's continuous usage stats; the last one wins).
	Usage *Usage
	// Err is set when the chunk reports an error: an `event: error` event or a
	// top-level `error` object. The request then failed.
	Err string
}

// Usage is a server's token accounting for one request. Nil fields were absent.
type Usage struct {
	PromptTokens     *int32
	CompletionTokens *int32
	ReasoningTokens  *int32
	CachedTokens     *int32
	// Invalid names the counts the server sent that are not whole numbers within
	// int32 (left nil above), e.g. "completion_tokens 3e+09".
	Invalid []string
}

// wire types for encoding/json: only the fields the recorder reads, so that the
// decoder skips everything else without allocating for it.
type wireChunk struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Delta        *wireDelta `json:"delta"`
	Text         *string    `json:"text"`
	FinishReason *string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

type wireUsage struct {
	PromptTokens            *float64 `json:"prompt_tokens"`
	CompletionTokens        *float64 `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens *float64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptTokensDetails *struct {
		CachedTokens *float64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// DeepSeek reports cache hits here instead of prompt_tokens_details.
	PromptCacheHitTokens *float64 `json:"prompt_cache_hit_tokens"`
}

type wirePart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking json.RawMessage `json:"thinking"`
}

type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

var doneSentinel = []byte("[DONE]")

// Decode classifies one SSE event of a completion stream. event is the SSE
// event name (empty for ordinary data events). A data payload that is not valid JSON
// is an error: the caller records the request as failed with it.
func Decode(event, data []byte) (Chunk, error) {
	var c Chunk
	trimmed := bytes.TrimSpace(data)
	if bytes.Equal(trimmed, doneSentinel) {
		c.Done = true
		return c, nil
	}
	if string(event) == "error" {
		c.Err = ErrorText(trimmed)
		return c, nil
	}
	if len(trimmed) == 0 {
		return c, nil // an empty data event carries nothing
	}
	if fc, ok := fastChunk(trimmed); ok {
		return fc, nil
	}
	return slowChunk(trimmed)
}

// slowChunk decodes a chunk with encoding/json: every case the fast path declines.
func slowChunk(trimmed []byte) (Chunk, error) {
	var c Chunk
	var w wireChunk
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return c, fmt.Errorf("malformed chunk: %v (data %q)", err, Truncate(string(trimmed), 80))
	}
	for i := range w.Choices {
		ch := &w.Choices[i]
		if ch.Text != nil && *ch.Text != "" {
			c.Content = true
		}
		if d := ch.Delta; d != nil {
			if (d.ReasoningContent != nil && *d.ReasoningContent != "") || (d.Reasoning != nil && *d.Reasoning != "") {
				c.Reasoning = true
			}
			content, reasoning := classifyContent(d.Content)
			c.Content = c.Content || content
			c.Reasoning = c.Reasoning || reasoning
			if len(d.ToolCalls) > 0 && !IsJSONNull(d.ToolCalls) && string(d.ToolCalls) != "[]" {
				// A tool call is generated output like answer text.
				c.Content = true
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			c.Finish = *ch.FinishReason
		}
	}
	if u := w.Usage; u != nil {
		c.Usage = &Usage{}
		c.Usage.PromptTokens = c.Usage.count("prompt_tokens", u.PromptTokens)
		c.Usage.CompletionTokens = c.Usage.count("completion_tokens", u.CompletionTokens)
		if u.CompletionTokensDetails != nil {
			c.Usage.ReasoningTokens = c.Usage.count("reasoning_tokens", u.CompletionTokensDetails.ReasoningTokens)
		}
		if u.PromptTokensDetails != nil {
			c.Usage.CachedTokens = c.Usage.count("cached_tokens", u.PromptTokensDetails.CachedTokens)
		}
		if c.Usage.CachedTokens == nil {
			c.Usage.CachedTokens = c.Usage.count("prompt_cache_hit_tokens", u.PromptCacheHitTokens)
		}
	}
	if len(w.Error) > 0 && !IsJSONNull(w.Error) {
		c.Err = ErrorText(w.Error)
	}
	return c, nil
}

// classifyContent reports whether a chat delta's content (a string, null, or an
// array of typed parts as Mistral sends) carries answer text and/or reasoning.
func classifyContent(raw json.RawMessage) (content, reasoning bool) {
	if len(raw) == 0 || IsJSONNull(raw) {
		return false, false
	}
	switch raw[0] {
	case '"':
		// Any string other than "" carries text; decoding it is not needed.
		return len(raw) > 2, false
	case '[':
		var parts []wirePart
		if json.Unmarshal(raw, &parts) != nil {
			return true, false // unknown shape, but something arrived
		}
		for _, p := range parts {
			switch p.Type {
			case "thinking", "reasoning":
				if len(p.Thinking) > 0 && !IsJSONNull(p.Thinking) && string(p.Thinking) != "[]" && string(p.Thinking) != `""` {
					reasoning = true
				} else if p.Text != "" {
					reasoning = true
				}
			default:
				if p.Text != "" {
					content = true
				}
			}
		}
		return content, reasoning
	}
	return true, false
}

// ErrorText renders an error payload (an OpenAI error object, a string, or anything)
// as a short message.
func ErrorText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	var wrapped struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && len(wrapped.Error) > 0 && !IsJSONNull(wrapped.Error) {
		raw = wrapped.Error
	}
	var e wireError
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		msg := e.Message
		code := string(bytes.Trim(e.Code, `"`))
		if code != "" && code != "null" {
			msg = code + ": " + msg
		} else if e.Type != "" {
			msg = e.Type + ": " + msg
		}
		return "server error: " + msg
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "server error: " + s
	}
	return "server error: " + string(raw)
}

func IsJSONNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// count converts a usage count to int32. A count that is no whole number from 0 to
// 2^31-1 (negative, fractional, too large for the trace's int32 columns) is not
// believed: it is left out (nil) and named in u.Invalid, never stored wrapped.
func (u *Usage) count(name string, f *float64) *int32 {
	if f == nil {
		return nil
	}
	v := *f
	if !(v >= 0 && v <= math.MaxInt32) || v != math.Trunc(v) {
		u.Invalid = append(u.Invalid, fmt.Sprintf("%s %v", name, v))
		return nil
	}
	n := int32(v)
	return &n
}

// Truncate shortens s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
