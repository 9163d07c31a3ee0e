package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"
)

// DateSample is one answer of the server with its Date header: the server's
// clock read somewhere between Sent and Received on this client's clock, with
// the header's resolution of one second.
type DateSample struct {
	Sent, Received time.Time
	Date           time.Time
}

// Date asks the server for path and returns its Date header with the client's
// send and receive times around it.
func (c *Client) Date(ctx context.Context, path string) (DateSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+path, nil)
	if err != nil {
		return DateSample{}, err
	}
	c.authorize(req)
	sent := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return DateSample{}, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, 5*time.Second)))
	}
	received := time.Now()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return DateSample{}, errors.New("the server sends no Date header")
	}
	return DateSample{Sent: sent, Received: received, Date: d}, nil
}
