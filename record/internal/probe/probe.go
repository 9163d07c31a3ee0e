// Package probe asks a server what it is before a sweep: its kind (vLLM, SGLang,
// llama.cpp, TGI), version, context length, slots and KV-cache capacity, from
// whichever of /v1/models, /metrics, /props, /slots, /get_server_info, /version and
// /info it answers.
package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/internal/prom"
	"github.com/ceiling-llm/ceiling/record/internal/client"
	"github.com/ceiling-llm/ceiling/trace"
)

// Probe is what the server revealed about itself before the sweep.
type Probe struct {
	Server trace.ServerInfo
	Models []string // ids listed by /v1/models, in order
	// Tokenize is the /tokenize flavour that answered: engine.LlamaCpp or engine.VLLM
	// as a string, or "".
	Tokenize string
	// ModelsStatus is the HTTP status of GET /v1/models (a 404 there suggests a
	// wrong port or path rather than a server with no model).
	ModelsStatus int
	// ModelsErr is why /v1/models gave no answer when the run went on without it
	// (the model was given and the list was too slow).
	ModelsErr error
	// Notes name the server's figures refused as out of range (bounds.go).
	Notes []string
}

// Server asks the server what it is. Only an unreachable server or refused
// credentials are errors; every other endpoint is optional, and the kind of server
// is detected, never required.
//
// Every string the server supplied that is stored or shown (the version, under
// whichever endpoint gave it) is redacted here, on the value returned: a server that
// echoes request headers could put the key in it. The model ids are sent back as
// they are, and redacted where they are stored or shown (the recorder does that).
func Server(ctx context.Context, c *client.Client) (Probe, error) {
	p, err := server(ctx, c)
	p.Server.Version = c.Redact(p.Server.Version)
	p.Server.MetricsURL = c.Redact(p.Server.MetricsURL)
	return p, err
}

func server(ctx context.Context, c *client.Client) (Probe, error) {
	p := Probe{Server: trace.ServerInfo{Kind: engine.Unknown}}
	status, body, err := c.Get(ctx, "/v1/models")
	switch {
	case errors.Is(err, client.ErrSlow) && c.Model() != "":
		// The model is known: the model list is not needed (a scale-to-zero
		// endpoint wakes slowly; the probe request proves the server).
		p.ModelsErr = err
	case errors.Is(err, client.ErrSlow):
		return p, fmt.Errorf("%w; give Options.Model to go on without the model list, or a longer Options.ProbeTimeout", err)
	case errors.Is(err, client.ErrRedirect):
		return p, err
	case err != nil:
		return p, fmt.Errorf("%w at %s: %v", client.ErrUnreachable, c.BaseURL(), err)
	}
	p.ModelsStatus = status
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return p, fmt.Errorf("%w (GET /v1/models: HTTP %d)", client.ErrUnauthorized, status)
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
					p.Server.MaxModelLen = p.inRange("/v1/models max_model_len", m.MaxModelLen, maxDeclaredTokens)
					if kind, ok := engine.OfOwnedBy(m.OwnedBy); ok {
						p.Server.Kind = kind
					}
				}
			}
		}
	}

	// Prometheus metrics: the metric prefix tells the kind, and an engine that
	// declares its KV cache in a series (vLLM's cache_config_info) states it there.
	if status, body, err := c.Get(ctx, "/metrics"); err == nil && status == http.StatusOK {
		p.Server.MetricsURL = c.BaseURL() + "/metrics"
		var kvSizeTokens *int64
		declSeries := "the declared KV series"
		// Unreadable lines are skipped: the samples that parse still tell the kind.
		samples, _ := prom.Parse(bytes.NewReader(body))
		for _, s := range samples {
			kind, ok := engine.OfMetricPrefix(s.Name)
			if !ok {
				continue
			}
			p.Server.Kind = kind
			if e, _ := engine.Of(kind); e.DeclaredKVSeries == "" || s.Name != e.DeclaredKVSeries {
				continue
			}
			declSeries = s.Name
			labels := prom.ParseLabels(s.Labels)
			p.Server.NumGPUBlocks = p.inRange(s.Name+" num_gpu_blocks", intLabel(labels, "num_gpu_blocks"), maxDeclaredBlocks)
			p.Server.BlockSize = p.inRange(s.Name+" block_size", intLabel(labels, "block_size"), maxBlockSize)
			// Newer vLLM states the token capacity itself; blocks × block size
			// is wrong for hybrid models, whose block_size is the smallest group's.
			kvSizeTokens = p.inRange(s.Name+" kv_cache_size_tokens", intLabel(labels, "kv_cache_size_tokens"), maxDeclaredTokens)
		}
		if kvSizeTokens != nil {
			p.Server.KVCapacityTokens = kvSizeTokens
		} else if kv := p.product(declSeries+" num_gpu_blocks", p.Server.NumGPUBlocks, "block_size", p.Server.BlockSize, maxDeclaredTokens); kv != nil {
			p.Server.KVCapacityTokens = kv
		} else {
			// Blocks and a size whose product no cache holds are not the server's.
			p.Server.NumGPUBlocks, p.Server.BlockSize = nil, nil
		}
	}

	// llama.cpp: /props has the context size and slot count.
	if status, body, err := c.Get(ctx, "/props"); err == nil && status == http.StatusOK {
		var props struct {
			DefaultGenerationSettings struct {
				NCtx *int64 `json:"n_ctx"`
			} `json:"default_generation_settings"`
			TotalSlots *int64 `json:"total_slots"`
			BuildInfo  string `json:"build_info"`
		}
		if json.Unmarshal(body, &props) == nil && (props.TotalSlots != nil || props.DefaultGenerationSettings.NCtx != nil) {
			p.Server.Kind = engine.LlamaCpp
			p.Server.Slots = p.inRange("/props total_slots", props.TotalSlots, maxDeclaredSlots)
			p.Server.Version = props.BuildInfo
			// n_ctx in /props is a slot's context (llama_n_ctx_seq); see llamaKV
			// for what it says of the KV cache.
			p.Server.NCtx = p.inRange("/props n_ctx", props.DefaultGenerationSettings.NCtx, maxDeclaredTokens)
		}
	}
	if p.Server.Kind == engine.LlamaCpp {
		if status, body, err := c.Get(ctx, "/slots"); err == nil && status == http.StatusOK {
			var slots []struct {
				NCtx *int64 `json:"n_ctx"`
			}
			if json.Unmarshal(body, &slots) == nil && len(slots) > 0 && len(slots) <= maxDeclaredSlots {
				if p.Server.Slots == nil {
					p.Server.Slots = ptr(int64(len(slots)))
				}
				if p.Server.NCtx == nil {
					p.Server.NCtx = p.inRange("/slots[0] n_ctx", slots[0].NCtx, maxDeclaredTokens)
				}
			}
		}
		p.llamaKV()
		if p.Server.MaxModelLen == nil && p.Server.NCtx != nil {
			p.Server.MaxModelLen = p.Server.NCtx
		}
	}

	// SGLang: /get_server_info has the KV pool size.
	if p.Server.Kind == engine.SGLang || p.Server.Kind == engine.Unknown {
		if status, body, err := c.Get(ctx, "/get_server_info"); err == nil && status == http.StatusOK {
			var info struct {
				MaxTotalNumTokens  *int64 `json:"max_total_num_tokens"`
				ContextLength      *int64 `json:"context_length"`
				MaxRunningRequests *int64 `json:"max_running_requests"`
				Version            string `json:"version"`
			}
			if json.Unmarshal(body, &info) == nil && info.MaxTotalNumTokens != nil {
				p.Server.Kind = engine.SGLang
				p.Server.KVCapacityTokens = p.inRange("/get_server_info max_total_num_tokens", info.MaxTotalNumTokens, maxDeclaredTokens)
				p.Server.Version = info.Version
				if p.Server.MaxModelLen == nil {
					p.Server.MaxModelLen = p.inRange("/get_server_info context_length", info.ContextLength, maxDeclaredTokens)
				}
				if n := p.inRange("/get_server_info max_running_requests", info.MaxRunningRequests, maxDeclaredSlots); n != nil {
					p.Server.Slots = n
				}
			}
		}
	}

	// vLLM (and others) answer /version; TGI answers /info.
	if p.Server.Version == "" && (p.Server.Kind == engine.VLLM || p.Server.Kind == engine.Unknown) {
		if status, body, err := c.Get(ctx, "/version"); err == nil && status == http.StatusOK {
			var v struct {
				Version string `json:"version"`
			}
			if json.Unmarshal(body, &v) == nil {
				p.Server.Version = v.Version
			}
		}
	}
	if p.Server.Kind == engine.Unknown || p.Server.Kind == engine.TGI {
		if status, body, err := c.Get(ctx, "/info"); err == nil && status == http.StatusOK {
			var v struct {
				Version  string `json:"version"`
				ModelID  string `json:"model_id"`
				MaxTotal *int64 `json:"max_total_tokens"`
				// max_batch_total_tokens is the tokens TGI's KV cache holds for the
				// whole running batch (its router's budget, sized from free memory
				// at warm-up): the KV capacity. max_total_tokens is one request's.
				MaxBatchTotal *int64 `json:"max_batch_total_tokens"`
			}
			if json.Unmarshal(body, &v) == nil && v.ModelID != "" {
				p.Server.Kind = engine.TGI
				p.Server.Version = v.Version
				if p.Server.MaxModelLen == nil {
					p.Server.MaxModelLen = p.inRange("/info max_total_tokens", v.MaxTotal, maxDeclaredTokens)
				}
				if p.Server.KVCapacityTokens == nil {
					p.Server.KVCapacityTokens = p.inRange("/info max_batch_total_tokens", v.MaxBatchTotal, maxDeclaredTokens)
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

// llamaKV states llama.cpp's KV cache as far as its endpoints declare it. Each
// slot reports its n_ctx, the context it may use, and the slot count, but not the
// layout (analyze/policy_kvlayout.go): with --kv-unified the slots share one cache
// of n_ctx tokens; without it each owns n_ctx. One slot is one cache of n_ctx
// either way; with more, the cache is n_ctx .. slots × n_ctx until the sweep tells
// them apart (KV-exhaustion errors happen only in a shared cache), so no single
// figure is stated.
func (p *Probe) llamaKV() {
	s := &p.Server
	if s.NCtx == nil || *s.NCtx <= 0 {
		return
	}
	if s.Slots == nil || *s.Slots <= 0 {
		// How many slots share or split the cache is unknown: no figure.
		return
	}
	slots := *s.Slots
	if slots == 1 {
		s.KVCapacityTokens = ptr(*s.NCtx)
		return
	}
	s.KVLayout = "unknown"
	s.KVCapacityMinTokens = ptr(*s.NCtx)
	// Both figures are range-checked, so the product cannot overflow; one past
	// any cache is named and not used.
	s.KVCapacityMaxTokens = p.product("/props n_ctx", s.NCtx, "total_slots", &slots, maxDeclaredTokens)
}

func ptr[T any](v T) *T { return &v }
