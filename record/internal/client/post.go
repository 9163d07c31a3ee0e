package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// PostEmpty sends a POST without a body to path (with credentials), for the
// engines' administrative endpoints (vLLM /reset_prefix_cache, SGLang
// /flush_cache): the status and the start of the answer.
func (c *Client) PostEmpty(ctx context.Context, path string) (status int, body []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.String()+path, nil)
	if err != nil {
		return 0, nil, err
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, 30*time.Second)))
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, body, err
}
