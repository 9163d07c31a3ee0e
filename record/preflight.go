package record

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/record/internal/probe"
	"github.com/ceiling-llm/ceiling/record/internal/workload"
)

// explain turns pre-flight failures into messages a user can act on.
func (r *recorder) explain(err error) error {
	switch {
	case errors.Is(err, client.ErrUnauthorized):
		if r.opts.APIKey == "" {
			// No key was sent: nothing was refused but the request itself.
			return fmt.Errorf("the server answered %s although no API key was sent: if it wants one, set $%s; if not, it refused the request for another reason (a proxy's rule, or a server that speaks HTTP/2 only)",
				strings.TrimSpace(strings.TrimPrefix(err.Error(), client.ErrUnauthorized.Error())), r.opts.APIKeyEnv)
		}
		return fmt.Errorf("the server refused the API key from $%s (%v)", r.opts.APIKeyEnv, errors.Unwrap(err))
	}
	return err
}

// probeAttempts is how often a probe request is sent before the recorder gives up
// on a failure that may pass (a 429, a 5xx, a stream cut short): a server that
// fails one request in a few is still recorded, its failures counted level by
// level; one that fails every time is not. A refusal (401, 403, 404), an
// unreachable server or an answer that is no stream fails at once.
const probeAttempts = 3

// probeRequest sends one short streaming request, again after a failure that may
// pass (probeAttempts, waiting 1 s, then 2 s), and maps its failure to a clear
// error. It returns the prompt tokens the server reported (or -1).
func (r *recorder) probeRequest(ctx context.Context, text string) (int, error) {
	var earlier []string
	for attempt := 1; ; attempt++ {
		n, again, err := r.probeOnce(ctx, text)
		if err == nil || !again || attempt == probeAttempts {
			if err != nil && len(earlier) > 0 {
				err = fmt.Errorf("%w (the last of %d attempts; before it: %s)", err, attempt, strings.Join(earlier, "; "))
			}
			return n, err
		}
		earlier = append(earlier, err.Error())
		wait := time.Duration(attempt) * time.Second
		r.progress("%v: trying again in %s (attempt %d of %d)", err, wait, attempt+1, probeAttempts)
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// probeOnce sends the probe request once; again says whether its failure may
// pass on another try.
func (r *recorder) probeOnce(ctx context.Context, text string) (n int, again bool, err error) {
	res := r.client.Do(ctx, client.Prompt{Text: text}, 1)
	if ctx.Err() != nil {
		return -1, false, ctx.Err()
	}
	again = res.Status == 429 || res.Status == 500 || res.Status == 502 || res.Status == 503 || res.Status == 504 || res.Streamed
	n, err = r.probeResult(res)
	return n, again, err
}

// probeResult maps one probe request's result to the prompt tokens the server
// reported (or -1) and its failure to a clear error.
func (r *recorder) probeResult(res client.Result) (int, error) {
	switch {
	case res.Status == 401 || res.Status == 403:
		return -1, fmt.Errorf("%w (%s)", client.ErrUnauthorized, res.Err)
	case res.Status == 404 && r.modelsStatus == 404:
		return -1, fmt.Errorf("HTTP 404 at both %s/v1/models and %s: no OpenAI-compatible API there (a wrong port, or a path prefix missing from Options.URL?)", r.client.BaseURL(), r.client.Endpoint())
	case res.Status == 404:
		return -1, fmt.Errorf("%w: %q at %s (%s)", errModelNotFound, r.client.Redact(r.opts.Model), r.client.Endpoint(), res.Err)
	case res.Status == 0 && res.Err != "":
		return -1, fmt.Errorf("%w at %s: %s", client.ErrUnreachable, r.client.BaseURL(), res.Err)
	case res.Err != "":
		return -1, fmt.Errorf("the probe request failed: %s", res.Err)
	}
	if res.Usage != nil && res.Usage.PromptTokens != nil {
		return int(*res.Usage.PromptTokens), nil
	}
	return -1, nil
}

// prepareWorkload loads the dataset or calibrates synthetic prompts.
func (r *recorder) prepareWorkload(ctx context.Context, pr probe.Probe) (*workload.Workload, error) {
	o := r.opts
	if o.Dataset != "" {
		d, err := workload.LoadDataset(o.Dataset)
		if err != nil {
			return nil, err
		}
		if _, err := r.probeRequest(ctx, "Say hello."); err != nil {
			return nil, err
		}
		cfg := workload.DatasetConfig{Seed: o.workloadSeed(), MaxTokens: o.OutputTokens, MaxTotal: o.DatasetMaxTokens, Need: r.requestsPlanned()}
		if o.OutputLengths != "" {
			cfg.Output, _ = workload.ParseLengths(o.OutputLengths) // validated
		}
		cfg.Filter, _ = workload.ParseFilter(o.DatasetFilter)
		if cfg.MaxTotal == 0 && pr.Server.MaxModelLen != nil {
			cfg.MaxTotal = int(*pr.Server.MaxModelLen)
		}
		var count workload.MeasureFunc
		how := ""
		if _, flavour, err := r.client.Tokenize(ctx, pr.Tokenize, "hello"); err == nil {
			count = func(ctx context.Context, text string) (int, error) {
				n, _, err := r.client.Tokenize(ctx, flavour, text)
				return n, err
			}
			how = "counted with /tokenize"
		} else {
			r.progress("warning: the server has no /tokenize; dataset lengths are estimated at 4 characters per token")
		}
		return workload.NewDataset(ctx, d, cfg, count, how)
	}
	first := "request 99999999 the first of many words"
	usagePrompt, err := r.probeRequest(ctx, first)
	if err != nil {
		return nil, err
	}
	var measure workload.MeasureFunc
	how := ""
	if n, flavour, err := r.client.Tokenize(ctx, pr.Tokenize, first); err == nil {
		overhead := 0
		if usagePrompt >= 0 {
			// The chat template (and BOS) count too; /tokenize does not see them.
			overhead = usagePrompt - n
		}
		how = "calibrated with /tokenize"
		if overhead != 0 {
			how += fmt.Sprintf(" (+%d template tokens from usage)", overhead)
		}
		measure = func(ctx context.Context, text string) (int, error) {
			n, _, err := r.client.Tokenize(ctx, flavour, text)
			return n + overhead, err
		}
	} else if usagePrompt >= 0 {
		how = "calibrated with usage.prompt_tokens of probe requests"
		measure = func(ctx context.Context, text string) (int, error) {
			n, err := r.probeRequest(ctx, text)
			if err == nil && n < 0 {
				err = errors.New("the server stopped reporting usage")
			}
			return n, err
		}
	} else {
		r.progress("warning: the server has no /tokenize and reports no usage; prompt lengths are estimated, not calibrated")
	}
	cfg, err := o.syntheticConfig(r.replay)
	if err != nil {
		return nil, err
	}
	return workload.NewSynthetic(ctx, cfg, measure, how)
}
