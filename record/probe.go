package record

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/record/trace"
)

// ErrUnauthorized is returned (wrapped) when the server refuses the credentials.
var ErrUnauthorized = errors.New("the server refused the API key")

// ErrUnreachable is returned (wrapped) when the server cannot be contacted at all.
var ErrUnreachable = errors.New("cannot reach the server")

// Probe is what the server revealed about itself before the sweep.
type Probe struct {
	Server trace.ServerInfo
	Models []string // ids listed by /v1/models, in order
	// Tokenize is the /tokenize flavour that answered: "llamacpp", "vllm" or "".
	Tokenize string
}

// get fetches path from the server (with credentials) and returns the body of a 200.
func (c *Client) get(ctx context.Context, path string) (status int, body []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+path, nil)
	if err != nil {
		return 0, nil, err
	}
	c.authorize(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, errors.New(c.sanitize(c.failure(context.Background(), ctx, err, 10*time.Second)))
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 8<<20))
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

// ProbeServer asks the server what it is. Only an unreachable server or refused
// credentials are errors; every other endpoint is optional, and the kind of server
// is detected, never required.
func ProbeServer(ctx context.Context, c *Client) (Probe, error) {
	p := Probe{Server: trace.ServerInfo{Kind: "unknown"}}
	status, body, err := c.get(ctx, "/v1/models")
	if err != nil {
		return p, fmt.Errorf("%w at %s: %v", ErrUnreachable, c.BaseURL(), err)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return p, fmt.Errorf("%w (GET /v1/models: HTTP %d)", ErrUnauthorized, status)
	case status == http.StatusOK:
		var models struct {
			Data []struct {
				ID          string          `json:"id"`
				MaxModelLen *int64          `json:"max_model_len"`
				OwnedBy     string          `json:"owned_by"`
				Meta        json.RawMessage `json:"meta"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &models) == nil {
			for i, m := range models.Data {
				p.Models = append(p.Models, m.ID)
				if i == 0 {
					p.Server.MaxModelLen = m.MaxModelLen
					if m.OwnedBy == "vllm" {
						p.Server.Kind = "vllm"
					} else if m.OwnedBy == "sglang" {
						p.Server.Kind = "sglang"
					} else if m.OwnedBy == "llamacpp" {
						p.Server.Kind = "llamacpp"
					}
				}
			}
		}
	}

	// Prometheus metrics: the vLLM cache config, and the metric prefix tells the kind.
	if status, body, err := c.get(ctx, "/metrics"); err == nil && status == http.StatusOK {
		p.Server.MetricsURL = c.BaseURL() + "/metrics"
		samples, _ := parseMetrics(strings.NewReader(string(body)), 0)
		for _, s := range samples {
			switch {
			case strings.HasPrefix(s.Name, "vllm:"):
				p.Server.Kind = "vllm"
				if s.Name == "vllm:cache_config_info" {
					labels := parseLabels(s.Labels)
					p.Server.NumGPUBlocks = intLabel(labels, "num_gpu_blocks")
					p.Server.BlockSize = intLabel(labels, "block_size")
				}
			case strings.HasPrefix(s.Name, "sglang:"):
				p.Server.Kind = "sglang"
			case strings.HasPrefix(s.Name, "llamacpp:"):
				p.Server.Kind = "llamacpp"
			case strings.HasPrefix(s.Name, "tgi_"):
				p.Server.Kind = "tgi"
			}
		}
		if p.Server.NumGPUBlocks != nil && p.Server.BlockSize != nil {
			p.Server.KVCapacityTokens = ptr(*p.Server.NumGPUBlocks * *p.Server.BlockSize)
		}
	}

	// llama.cpp: /props has the context size and slot count.
	if status, body, err := c.get(ctx, "/props"); err == nil && status == http.StatusOK {
		var props struct {
			DefaultGenerationSettings struct {
				NCtx *int64 `json:"n_ctx"`
			} `json:"default_generation_settings"`
			TotalSlots *int64 `json:"total_slots"`
			BuildInfo  string `json:"build_info"`
		}
		if json.Unmarshal(body, &props) == nil && (props.TotalSlots != nil || props.DefaultGenerationSettings.NCtx != nil) {
			p.Server.Kind = "llamacpp"
			p.Server.Slots = props.TotalSlots
			p.Server.Version = props.BuildInfo
			// n_ctx in /props is per slot; the KV cache holds n_ctx × slots tokens.
			p.Server.NCtx = props.DefaultGenerationSettings.NCtx
		}
	}
	if p.Server.Kind == "llamacpp" {
		if status, body, err := c.get(ctx, "/slots"); err == nil && status == http.StatusOK {
			var slots []struct {
				NCtx *int64 `json:"n_ctx"`
			}
			if json.Unmarshal(body, &slots) == nil && len(slots) > 0 {
				if p.Server.Slots == nil {
					p.Server.Slots = ptr(int64(len(slots)))
				}
				var total int64
				for _, s := range slots {
					if s.NCtx != nil {
						total += *s.NCtx
					}
				}
				if total > 0 {
					p.Server.KVCapacityTokens = ptr(total)
				}
				if p.Server.NCtx == nil && slots[0].NCtx != nil {
					p.Server.NCtx = slots[0].NCtx
				}
			}
		}
		if p.Server.KVCapacityTokens == nil && p.Server.NCtx != nil && p.Server.Slots != nil {
			p.Server.KVCapacityTokens = ptr(*p.Server.NCtx * *p.Server.Slots)
		}
		if p.Server.MaxModelLen == nil && p.Server.NCtx != nil {
			p.Server.MaxModelLen = p.Server.NCtx
		}
	}

	// SGLang: /get_server_info has the KV pool size.
	if p.Server.Kind == "sglang" || p.Server.Kind == "unknown" {
		if status, body, err := c.get(ctx, "/get_server_info"); err == nil && status == http.StatusOK {
			var info struct {
				MaxTotalNumTokens  *int64 `json:"max_total_num_tokens"`
				ContextLength      *int64 `json:"context_length"`
				MaxRunningRequests *int64 `json:"max_running_requests"`
				Version            string `json:"version"`
			}
			if json.Unmarshal(body, &info) == nil && info.MaxTotalNumTokens != nil {
				p.Server.Kind = "sglang"
				p.Server.KVCapacityTokens = info.MaxTotalNumTokens
				p.Server.Version = info.Version
				if p.Server.MaxModelLen == nil {
					p.Server.MaxModelLen = info.ContextLength
				}
				if info.MaxRunningRequests != nil {
					p.Server.Slots = info.MaxRunningRequests
				}
			}
		}
	}

	// vLLM (and others) answer /version; TGI answers /info.
	if p.Server.Version == "" && (p.Server.Kind == "vllm" || p.Server.Kind == "unknown") {
		if status, body, err := c.get(ctx, "/version"); err == nil && status == http.StatusOK {
			var v struct {
				Version string `json:"version"`
			}
			if json.Unmarshal(body, &v) == nil {
				p.Server.Version = v.Version
			}
		}
	}
	if p.Server.Kind == "unknown" || p.Server.Kind == "tgi" {
		if status, body, err := c.get(ctx, "/info"); err == nil && status == http.StatusOK {
			var v struct {
				Version  string `json:"version"`
				ModelID  string `json:"model_id"`
				MaxTotal *int64 `json:"max_total_tokens"`
			}
			if json.Unmarshal(body, &v) == nil && v.ModelID != "" {
				p.Server.Kind = "tgi"
				p.Server.Version = v.Version
				if p.Server.MaxModelLen == nil {
					p.Server.MaxModelLen = v.MaxTotal
				}
			}
		}
	}
	return p, nil
}

func intLabel(labels map[string]string, name string) *int64 {
	v, ok := labels[name]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// tokenize counts text's tokens with the server's /tokenize endpoint, in the flavour
// the server speaks (llama.cpp {"content"} → {"tokens"}, vLLM {"model","prompt"} →
// {"count"}). flavour "" tries both and reports which answered.
func (c *Client) tokenize(ctx context.Context, flavour, text string) (int, string, error) {
	try := []string{"llamacpp", "vllm"}
	if flavour != "" {
		try = []string{flavour}
	}
	var lastErr error = errors.New("no /tokenize endpoint")
	for _, f := range try {
		var body any = map[string]any{"content": text}
		if f == "vllm" {
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

// parseMetrics reads Prometheus text exposition format into samples stamped ts.
// Metric names may contain colons (vllm:num_requests_running). Labels are kept as
// their canonical text `a="x",b="y"` (sorted by name). Lines it cannot read are
// skipped; the count of skipped lines is returned so a caller can warn.
func parseMetrics(r io.Reader, ts int64) ([]trace.MetricSample, int) {
	var out []trace.MetricSample
	bad := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, ok := parseMetricLine(line)
		if !ok {
			bad++
			continue
		}
		s.TsNs = ts
		out = append(out, s)
	}
	return out, bad
}

// parseMetricLine reads `name{labels} value [timestamp]`.
func parseMetricLine(line string) (trace.MetricSample, bool) {
	var s trace.MetricSample
	i := 0
	for i < len(line) && line[i] != '{' && line[i] != ' ' && line[i] != '\t' {
		i++
	}
	s.Name = line[:i]
	if s.Name == "" {
		return s, false
	}
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		labels, n, ok := scanLabels(rest)
		if !ok {
			return s, false
		}
		s.Labels = labels
		rest = rest[n:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 {
		return s, false
	}
	v, err := parseFloat(fields[0])
	if err != nil {
		return s, false
	}
	s.Value = v
	return s, true
}

func parseFloat(f string) (float64, error) {
	switch f {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(f, 64)
}

// scanLabels reads `{a="x",b="y"}` at the start of s, honouring escapes inside the
// quoted values; it returns the canonical label text and the bytes consumed.
func scanLabels(s string) (string, int, bool) {
	type kv struct{ k, v string }
	var pairs []kv
	i := 1
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i >= len(s) {
			return "", 0, false
		}
		if s[i] == '}' {
			i++
			break
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ' ' {
			i++
		}
		key := s[start:i]
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || s[i] != '=' || key == "" {
			return "", 0, false
		}
		i++
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || s[i] != '"' {
			return "", 0, false
		}
		i++
		var b strings.Builder
		closed := false
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			if c == '"' {
				closed = true
				i++
				break
			}
			b.WriteByte(c)
			i++
		}
		if !closed {
			return "", 0, false
		}
		pairs = append(pairs, kv{key, b.String()})
	}
	sort.Slice(pairs, func(a, b int) bool { return pairs[a].k < pairs[b].k })
	var out strings.Builder
	for j, p := range pairs {
		if j > 0 {
			out.WriteByte(',')
		}
		out.WriteString(p.k)
		out.WriteString(`="`)
		out.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(p.v))
		out.WriteByte('"')
	}
	return out.String(), i, true
}

// parseLabels turns canonical label text back into a map.
func parseLabels(text string) map[string]string {
	m := map[string]string{}
	if text == "" {
		return m
	}
	s := "{" + text + "}"
	i := 1
	for i < len(s) && s[i] != '}' {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			break
		}
		key := s[i : i+eq]
		i += eq + 2 // skip ="
		var b strings.Builder
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' && i+1 < len(s) {
				if s[i+1] == 'n' {
					b.WriteByte('\n')
				} else {
					b.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			b.WriteByte(s[i])
			i++
		}
		m[key] = b.String()
		i++ // closing quote
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
	return m
}

// scrapeMetrics polls url every interval until ctx ends, passing each scrape's
// samples to sink. Failed scrapes are counted, not fatal: a metrics endpoint that
// hiccups must not stop a sweep.
func scrapeMetrics(ctx context.Context, c *Client, url string, interval time.Duration, sink func([]trace.MetricSample)) (failures int) {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ts := time.Now().UnixNano()
		if samples, err := c.scrape(ctx, url, ts); err == nil {
			sink(samples)
		} else if ctx.Err() == nil {
			failures++
		}
		select {
		case <-ctx.Done():
			return failures
		case <-t.C:
		}
	}
}

// scrape fetches one metrics page (an absolute URL, possibly another host).
func (c *Client) scrape(ctx context.Context, url string, ts int64) ([]trace.MetricSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(url, c.BaseURL()) {
		c.authorize(req) // never send the key to another host
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	samples, _ := parseMetrics(io.LimitReader(resp.Body, 32<<20), ts)
	return samples, nil
}
