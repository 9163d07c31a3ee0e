// Package client is the recorder's HTTP client for one OpenAI-compatible server:
// streaming completions measured chunk by chunk (Do), and the few plain requests the
// recorder needs besides (model list, /tokenize, /metrics). Credentials never reach
// an error text, a row or the run info.
package client

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/internal/safetext"
	"github.com/ceiling-llm/ceiling/internal/urlcred"
	"github.com/ceiling-llm/ceiling/record/internal/sse"
)

// MaxErrorBytes is the longest error text stored in a row (docs/trace-schema.md).
const MaxErrorBytes = 512

// ErrUnauthorized is returned (wrapped) when the server refuses the credentials.
var ErrUnauthorized = errors.New("the server refused the API key")

// ErrUnreachable is returned (wrapped) when the server cannot be contacted at all.
var ErrUnreachable = errors.New("cannot reach the server")

// ErrRedirect is returned (wrapped) by Get for a redirect it did not follow.
var ErrRedirect = errors.New("redirected")

// ErrSlow is returned (wrapped) when a plain request got no answer within
// ProbeTimeout: the server accepted the connection but did not answer in time.
var ErrSlow = errors.New("no answer in time")

// DefaultProbeTimeout bounds a plain request when Options.ProbeTimeout is 0.
const DefaultProbeTimeout = 10 * time.Second

// errStalled is the cancellation cause when a request saw no data for the timeout.
var errStalled = errors.New("stalled")

// errRequestTimeout is the cancellation cause when a request ran past RequestTimeout.
var errRequestTimeout = errors.New("request timeout")

// errFinished is the cancellation cause when a stream sent its finish_reason (and
// its usage) but neither [DONE] nor a close within finishGrace: the answer is
// complete, and waiting for the stall timeout would record it as a stall.
var errFinished = errors.New("finished")

// ErrPastMaxTokens names a request whose server kept streaming far past max_tokens:
// it is ended so that the chunks kept for it (their gaps, its text) stay bounded.
var ErrPastMaxTokens = errors.New("the server streamed far past max_tokens")

// Options configures the client.
type Options struct {
	// BaseURL is the server root (scheme://host:port[/prefix]), with or without
	// credentials; a trailing /v1 is accepted.
	BaseURL  string
	Endpoint string // "chat" or "completions"
	Model    string
	// APIKey is sent as a Bearer token. It never appears in errors or rows.
	APIKey string
	// Timeout fails a request that receives no token for this long (no headers, or
	// no token-carrying event: SSE comments and empty events do not count): it
	// catches stalled streams without cutting off long, healthy ones.
	Timeout time.Duration
	// RequestTimeout bounds a whole request, however much it still sends (0 = none).
	RequestTimeout time.Duration
	// ProbeTimeout bounds each plain request (model list, /metrics, /props, ...):
	// 0 = DefaultProbeTimeout. A scale-to-zero endpoint may need more to wake.
	ProbeTimeout time.Duration
	IgnoreEOS    bool
	// MaxConns sizes the connection pool (the sweep's largest concurrency).
	MaxConns int
	Insecure bool // skip TLS certificate verification
}

// Client streams completions from one OpenAI-compatible server. It is safe for
// concurrent use.
type Client struct {
	opts     Options
	base     *url.URL // without credentials
	endpoint string   // full URL of the completion endpoint
	user     *url.Userinfo
	http     *http.Client
	secrets  []string // strings that must never reach an error text
}

// splitURL parses a server URL, returning it without credentials (and without a
// trailing slash or /v1) and the credentials it carried.
func splitURL(raw string) (*url.URL, *url.Userinfo, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("invalid Options.URL: %v", redactURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, nil, fmt.Errorf("invalid Options.URL %q: want http:// or https://", StripCredentials(raw))
	}
	if u.Host == "" {
		return nil, nil, fmt.Errorf("invalid Options.URL %q: no host", StripCredentials(raw))
	}
	if u.RawQuery != "" || u.ForceQuery {
		// A query is not sent (the endpoints' paths are appended to the root), and a
		// key in it (?api_key=...) would only be stored: refuse it, without echoing it.
		return nil, nil, fmt.Errorf("invalid Options.URL %q: it has a query string (not shown: it may hold a key), which is not sent; give the API key in Options.APIKey", StripCredentials(raw))
	}
	user := u.User
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.Path = strings.TrimSuffix(u.Path, "/v1")
	u.RawPath = ""
	return u, user, nil
}

// CheckURL reports whether raw is a usable --url (http or https, with a host),
// without contacting it.
func CheckURL(raw string) error {
	_, _, err := splitURL(raw)
	return err
}

// redactURLError keeps url.Parse errors from echoing a URL with a password.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// StripCredentials returns raw without any user:password@ part, query or fragment
// (see package urlcred, which the CLI shares).
func StripCredentials(raw string) string { return urlcred.Strip(raw) }

// New prepares a client; it does not contact the server.
func New(opts Options) (*Client, error) {
	base, user, err := splitURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if opts.Endpoint == "" {
		opts.Endpoint = "chat"
	}
	path := "/v1/chat/completions"
	switch opts.Endpoint {
	case "chat":
	case "completions":
		path = "/v1/completions"
	default:
		return nil, fmt.Errorf("invalid endpoint %q: want chat or completions", opts.Endpoint)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	conns := max(opts.MaxConns, 16)
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// Streams are read as they arrive; a compressed stream would be buffered.
		DisableCompression: true,
		// HTTP/1.1 only: one stream per connection, like the serving engines'
		// benchmarks, and no head-of-line coupling between requests.
		ForceAttemptHTTP2: false,
		TLSNextProto:      map[string]func(string, *tls.Conn) http.RoundTripper{},
		ReadBufferSize:    8 << 10,
		WriteBufferSize:   8 << 10,
	}
	if opts.Insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
	}
	c := &Client{
		opts:     opts,
		base:     base,
		endpoint: base.String() + path,
		user:     user,
	}
	c.http = &http.Client{Transport: tr, CheckRedirect: c.checkRedirect}
	if opts.APIKey != "" {
		c.secrets = append(c.secrets, opts.APIKey, base64.StdEncoding.EncodeToString([]byte(opts.APIKey)))
	}
	if user != nil {
		p, _ := user.Password()
		// The Basic credentials as sent (base64) and decoded.
		cred := user.Username() + ":" + p
		c.secrets = append(c.secrets, base64.StdEncoding.EncodeToString([]byte(cred)), base64.URLEncoding.EncodeToString([]byte(cred)))
		if p != "" {
			c.secrets = append(c.secrets, cred, p)
		}
	}
	return c, nil
}

// checkRedirect follows no redirect but a GET's to the server's own origin: a
// completion request redirected elsewhere would send the prompt (and, to another
// port of the same host, the credentials) where the user did not point --url, and
// record that server's answers as the target's. The 3xx is returned instead.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if req.Method == http.MethodGet && len(via) < 5 && SameOrigin(req.URL, c.base) {
		return nil
	}
	return http.ErrUseLastResponse
}

// SameOrigin reports whether a and b have the same scheme, host and port (an
// absent port is the scheme's default). The credentials go only to --url's origin.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// BaseURL is the server root without credentials.
func (c *Client) BaseURL() string { return c.base.String() }

// Endpoint is the full URL of the completion endpoint, without credentials.
func (c *Client) Endpoint() string { return c.endpoint }

// Model is the model requested ("" until known).
func (c *Client) Model() string { return c.opts.Model }

// SetModel sets the model requested, once the server has said which it serves;
// call it before the first request.
func (c *Client) SetModel(model string) { c.opts.Model = model }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// sanitize makes an error text safe to store and show: no secrets, no character
// that controls a terminal (safetext.Text: its lines are kept), at most
// MaxErrorBytes.
func (c *Client) sanitize(s string) string {
	return sse.Truncate(safetext.Text(c.RedactSecrets(s)), MaxErrorBytes)
}

// authValue matches an Authorization value in a text a server sent back (a server
// that echoes request headers): the scheme and the credentials.
var authValue = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}`)

// Redact makes a one-line string the server supplied (a model id, a version) safe
// to store and show: RedactSecrets, then safetext.Line (no character that controls
// a terminal, on one line).
func (c *Client) Redact(s string) string { return safetext.Line(c.RedactSecrets(s)) }

// RedactSecrets removes the API key, the URL's credentials and any Authorization
// value from a string the server supplied, and makes it valid UTF-8. Metric
// labels are stored through it alone: their text is parsed again, and whoever
// shows a label sanitises it then.
func (c *Client) RedactSecrets(s string) string {
	s = authValue.ReplaceAllString(s, "[redacted credentials]")
	for _, sec := range c.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// authorize adds the credentials to a request.
func (c *Client) authorize(req *http.Request) {
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	} else if c.user != nil {
		p, _ := c.user.Password()
		req.SetBasicAuth(c.user.Username(), p)
	}
}
