package enginetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

type endpoint int

const (
	endpointChat endpoint = iota
	endpointCompletions
)

func (e endpoint) String() string {
	if e == endpointChat {
		return "chat"
	}
	return "completions"
}

// request is the subset of the OpenAI request body the engine looks at.
type request struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	Stop      json.RawMessage `json:"stop"`
	IgnoreEOS bool            `json:"ignore_eos"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// maxBody bounds request bodies (prompts of a few hundred thousand words fit).
const maxBody = 64 << 20

// promptTokens counts the prompt's tokens: the words of every message's text, or of
// the completions prompt (a string, a list of strings, or a list of token ids).
func (q *request) promptTokens(ep endpoint) (int, error) {
	if ep == endpointChat {
		if len(q.Messages) == 0 {
			return 0, errors.New("messages: at least one message is required")
		}
		n := 0
		for i, m := range q.Messages {
			c, err := contentTokens(m.Content)
			if err != nil {
				return 0, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			n += c
		}
		return n, nil
	}
	p := bytes.TrimSpace(q.Prompt)
	if len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return 0, errors.New("prompt: required")
	}
	switch p[0] {
	case '"':
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return 0, fmt.Errorf("prompt: %w", err)
		}
		return CountTokens(s), nil
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(p, &list); err != nil {
			return 0, fmt.Errorf("prompt: %w", err)
		}
		n := 0
		for _, el := range list {
			el = bytes.TrimSpace(el)
			if len(el) > 0 && el[0] == '"' {
				var s string
				if err := json.Unmarshal(el, &s); err != nil {
					return 0, fmt.Errorf("prompt: %w", err)
				}
				n += CountTokens(s)
			} else {
				n++ // a token id
			}
		}
		return n, nil
	}
	return 0, errors.New("prompt: want a string or a list")
}

// promptTokenIDs is the prompt's token ids, n of them (promptTokens counted
// them): each word's id, a token id as itself, the messages' texts in order.
func (q *request) promptTokenIDs(ep endpoint, n int) []uint32 {
	ids := make([]uint32, 0, n)
	text := func(raw json.RawMessage) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '"' {
			var parts []struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &parts) == nil {
				for _, p := range parts {
					ids = appendTokenIDs(ids, p.Text)
				}
			}
			return
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			ids = appendTokenIDs(ids, s)
		}
	}
	if ep == endpointChat {
		for _, m := range q.Messages {
			text(m.Content)
		}
	} else {
		p := bytes.TrimSpace(q.Prompt)
		var list []json.RawMessage
		if len(p) > 0 && p[0] == '[' && json.Unmarshal(p, &list) == nil {
			for _, el := range list {
				var id uint32
				if json.Unmarshal(el, &id) == nil {
					ids = append(ids, id)
				} else {
					text(el)
				}
			}
		} else {
			text(p)
		}
	}
	if len(ids) != n {
		return nil // cannot happen: the same split as promptTokens
	}
	return ids
}

// contentTokens counts a message content: a string or a list of parts with "text".
func contentTokens(c json.RawMessage) (int, error) {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return 0, nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return 0, err
		}
		return CountTokens(s), nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &parts); err != nil {
		return 0, errors.New("want a string or a list of parts")
	}
	n := 0
	for _, p := range parts {
		n += CountTokens(p.Text)
	}
	return n, nil
}

// serveCompletion handles POST /v1/chat/completions and /v1/completions.
func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request, ep endpoint) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "BadRequestError", "method not allowed; use POST")
		return
	}
	received := time.Now()
	if !s.enter() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "server is shutting down")
		return
	}
	defer s.handlers.Done()

	entry := &RequestLog{Endpoint: ep.String(), Received: received, RequestID: r.Header.Get("X-Request-Id")}
	s.logMu.Lock()
	entry.Index = int64(len(s.log))
	s.log = append(s.log, entry)
	s.logMu.Unlock()

	// finish records the outcome; everything below writes entry only through
	// s.update so Log can read concurrently.
	status := 0
	defer func() {
		s.update(func() {
			entry.Status = status
			entry.Ended = time.Now()
		})
	}()
	fail := func(code int, typ, msg string) {
		status = code
		writeError(w, code, typ, msg)
	}

	fault := FaultNone
	if s.cfg.Fault != nil {
		fault = s.cfg.Fault(entry.Index)
	}

	var q request
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err == nil {
		err = json.Unmarshal(body, &q)
	}
	if err != nil {
		s.update(func() { entry.Fault = fault })
		fail(http.StatusBadRequest, "BadRequestError", "invalid request body: "+err.Error())
		return
	}
	prompt, perr := q.promptTokens(ep)
	maxTokens := s.cfg.DefaultOutputTokens
	if q.MaxTokens != nil {
		maxTokens = *q.MaxTokens
	} else if q.MaxCompletionTokens != nil {
		maxTokens = *q.MaxCompletionTokens
	}
	s.update(func() {
		entry.Fault = fault
		entry.Model = q.Model
		entry.Stream = q.Stream
		entry.MaxTokens = maxTokens
		entry.PromptTokens = prompt
	})

	if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
		// Never echo the key or what was sent.
		fail(http.StatusUnauthorized, "AuthenticationError", "Unauthorized: invalid or missing API key")
		return
	}
	switch fault {
	case FaultUnauthorized:
		fail(http.StatusUnauthorized, "AuthenticationError", "Unauthorized: invalid or missing API key")
		return
	case FaultModelNotFound:
		fail(http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", q.Model))
		return
	case FaultTooManyRequests:
		fail(http.StatusTooManyRequests, "RateLimitError", "Too many requests: rate limit exceeded")
		return
	case FaultInternal:
		fail(http.StatusInternalServerError, "InternalServerError", "internal server error (injected)")
		return
	case FaultUnavailable:
		fail(http.StatusServiceUnavailable, "ServiceUnavailableError", "service unavailable (injected)")
		return
	case FaultEchoAuth:
		fail(http.StatusInternalServerError, "InternalServerError", "cannot serve request with headers Authorization="+r.Header.Get("Authorization"))
		return
	case FaultBadUTF8:
		// Written by hand: encoding/json would replace the invalid bytes.
		status = http.StatusInternalServerError
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte("{\"error\":{\"message\":\"bad byte \xff\xfe in \xc3(\",\"type\":\"InternalServerError\",\"code\":500}}"))
		return
	case FaultRedirect:
		status = http.StatusTemporaryRedirect
		http.Redirect(w, r, s.cfg.RedirectURL+r.URL.Path, status)
		return
	case FaultHTML:
		status = http.StatusOK
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Sign in</h1></body></html>"))
		return
	}
	if perr != nil {
		fail(http.StatusBadRequest, "BadRequestError", perr.Error())
		return
	}
	if q.Model != "" && q.Model != s.cfg.Model {
		fail(http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", q.Model))
		return
	}
	if maxTokens < 1 {
		fail(http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens must be at least 1, got %d", maxTokens))
		return
	}
	if s.cfg.MaxModelLen > 0 && prompt+maxTokens > s.cfg.MaxModelLen {
		fail(http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.cfg.MaxModelLen, prompt+maxTokens, prompt, maxTokens))
		return
	}

	g := &generation{
		s:         s,
		entry:     entry,
		ep:        ep,
		fault:     fault,
		prompt:    prompt,
		output:    maxTokens,
		usage:     !s.cfg.IgnoreUsageOption,
		finish:    "length",
		id:        strconv.FormatInt(entry.Index, 16),
		created:   received.Unix(),
		chunkTime: s.cfg.RecordChunkTimes,
	}
	if ep == endpointChat {
		g.reasoning = min(s.cfg.ReasoningTokens, maxTokens)
	}
	if s.sim != nil && s.cfg.prefixCaching() {
		g.ids = q.promptTokenIDs(ep, prompt)
	}
	if len(bytes.TrimSpace(q.Stop)) > 0 && !bytes.Equal(bytes.TrimSpace(q.Stop), []byte("null")) {
		g.finish = "stop"
	}
	if s.sim != nil {
		if st := g.simRefuse(w); st != 0 {
			status = st
			return
		}
	}
	status = http.StatusOK
	defer func() {
		if g.status != 0 {
			status = g.status
		}
	}()
	if q.Stream && fault != FaultNotStreamed {
		g.usage = g.usage && q.StreamOptions != nil && q.StreamOptions.IncludeUsage
		g.continuous = g.usage && q.StreamOptions.ContinuousUsageStats
		g.usageOnFinish = s.cfg.Kind == "llamacpp" && ep == endpointCompletions
		g.stream(r.Context(), w)
	} else {
		g.plain(r.Context(), w)
	}
}

// update applies f to log entries under the log lock.
func (s *Server) update(f func()) {
	s.logMu.Lock()
	f()
	s.logMu.Unlock()
}

// abortReason names who ended a stream early.
func (s *Server) abortReason() string {
	if s.base.Err() != nil {
		return "server"
	}
	return "client"
}

// sleepCtx waits d (or until ctx is done, reporting false).
func sleepCtx(ctx context.Context, t *time.Timer, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
