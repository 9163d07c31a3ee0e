package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/engine"
)

// Get fetches path from the server (with credentials): the status and body.
func (c *Client) Get(ctx context.Context, path string) (status int, body []byte, err error) {
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+path, nil)
	if err != nil {
		return 0, nil, err
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		if outer.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return 0, nil, fmt.Errorf("%w: GET %s did not answer within %s (the probe timeout; a server that scales to zero may need longer)", ErrSlow, path, c.opts.ProbeTimeout)
		}
		return 0, nil, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, c.opts.ProbeTimeout)))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 3 {
		// Not followed (another origin, or too many): name where it points.
		return resp.StatusCode, nil, fmt.Errorf("%w: GET %s answered HTTP %d to %s (not followed: point Options.URL at the server that answers)",
			ErrRedirect, path, resp.StatusCode, redirectTarget(resp))
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil && outer.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w: GET %s did not finish its answer within %s (the probe timeout)", ErrSlow, path, c.opts.ProbeTimeout)
	}
	return resp.StatusCode, body, err
}

// post sends a JSON body and returns the status and response body.
func (c *Client) post(ctx context.Context, path string, v any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+path, strings.NewReader(string(b)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, 30*time.Second)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	return resp.StatusCode, body, err
}

// Tokenize counts text's tokens with the server's /tokenize endpoint, in the flavour
// the server speaks (llama.cpp {"content"} → {"tokens"}, vLLM {"model","prompt"} →
// {"count"}). flavour "" tries both and reports which answered.
func (c *Client) Tokenize(ctx context.Context, flavour, text string) (int, string, error) {
	try := []string{string(engine.LlamaCpp), string(engine.VLLM)}
	if flavour != "" {
		try = []string{flavour}
	}
	var lastErr error = errors.New("no /tokenize endpoint")
	for _, f := range try {
		var body any = map[string]any{"content": text}
		if f == string(engine.VLLM) {
			body = map[string]any{"model": c.opts.Model, "prompt": text, "add_special_tokens": false}
		}
		status, resp, err := c.post(ctx, "/tokenize", body)
		if err != nil {
			return 0, "", err
		}
		if status != http.StatusOK {
			lastErr = fmt.Errorf("/tokenize: HTTP %d", status)
			continue
		}
		var out struct {
			Tokens []json.RawMessage `json:"tokens"`
			Count  *int              `json:"count"`
		}
		if err := json.Unmarshal(resp, &out); err != nil {
			lastErr = fmt.Errorf("/tokenize: %v", err)
			continue
		}
		if out.Count != nil {
			return *out.Count, f, nil
		}
		if out.Tokens != nil {
			return len(out.Tokens), f, nil
		}
		lastErr = errors.New("/tokenize: no tokens in the answer")
	}
	return 0, "", lastErr
}

// Fetch fetches an absolute URL (a metrics page, possibly on another host) and
// returns the body of a 200, at most limit bytes. The credentials go only to the
// server's own URLs.
func (c *Client) Fetch(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The key goes to --url's exact scheme, host and port only, compared parsed
	// (a string prefix matches another port, and a userinfo part another host).
	if SameOrigin(req.URL, c.base) {
		c.authorize(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, 10*time.Second)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}
