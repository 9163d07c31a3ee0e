package analyze

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ceiling-llm/ceiling/engine"
	"github.com/ceiling-llm/ceiling/internal/errtext"
)

// Failed requests: their kind, told from the HTTP status and the server's own error
// text, and the server's messages grouped per level so that the analysis shows what
// the server said, not only a count.

// Error kinds that name the KV cache. KindKVExhausted is a cache that filled under
// load (the request fit alone); KindContextExceeded is one request longer than the
// context a sequence (a llama.cpp slot, a vLLM max_model_len) may hold.
const (
	KindKVExhausted     = "kv_exhausted"
	KindContextExceeded = "context_exceeded"
)

// kvExhaustedTexts and contextExceededTexts are the engines' own words for a KV
// cache that ran out while serving and for one request longer than its context
// (package engine keeps them per engine, with where each engine prints them). They
// are read once: errorKind runs for every failed attempt.
var (
	kvExhaustedTexts     = engine.KVExhaustedTexts()
	contextExceededTexts = engine.ContextExceededTexts()
)

// errorKind names the kind of a failed attempt from its HTTP status and error text,
// so that errors can be counted by kind: "kv_exhausted", "context_exceeded",
// "http_429", "timeout", "reset", ... The server's words about its KV cache decide
// before the status: llama.cpp answers a full cache with HTTP 500 or inside a 200
// stream alike.
func errorKind(status int32, errText string, gotToken bool) string {
	e := strings.ToLower(errText)
	for _, t := range kvExhaustedTexts {
		if strings.Contains(e, t) {
			return KindKVExhausted
		}
	}
	for _, t := range contextExceededTexts {
		if strings.Contains(e, t) {
			return KindContextExceeded
		}
	}
	if status >= 400 || (status > 0 && status < 200) || (status >= 300 && status < 400) {
		return "http_" + strconv.Itoa(int(status))
	}
	switch {
	case e == "" && !gotToken:
		return "no_tokens"
	case strings.Contains(e, "timeout") || strings.Contains(e, "deadline") || strings.Contains(e, "timed out"):
		return "timeout"
	case strings.Contains(e, "reset"):
		return "reset"
	case strings.Contains(e, "refused"):
		return "refused"
	case strings.Contains(e, "eof") || strings.Contains(e, "closed") || strings.Contains(e, "broken pipe"):
		return "disconnect"
	case strings.Contains(e, "cancel"):
		return "canceled"
	case strings.Contains(e, "json") || strings.Contains(e, "sse") || strings.Contains(e, "parse") || strings.Contains(e, "decod"):
		return "protocol"
	case strings.Contains(e, "stream") && strings.Contains(e, "error"):
		return "stream_error"
	}
	return "other"
}

const (
	// errorGroupsMax is the most groups kept per level; the rest are counted in one
	// group per kind whose message says so.
	errorGroupsMax = 8
	// errorMessageMax is the most characters of a message kept.
	errorMessageMax = 300
)

// errorGroups accumulates a level's failures by kind and message.
type errorGroups struct {
	order  []string
	groups map[string]*ErrorGroup
	other  map[string]int // failures past errorGroupsMax, by kind
}

func (g *errorGroups) add(kind, text string) {
	if g.groups == nil {
		g.groups = map[string]*ErrorGroup{}
		g.other = map[string]int{}
	}
	key := kind + "\x00" + errtext.Key(text)
	if e, ok := g.groups[key]; ok {
		e.Count++
		return
	}
	if len(g.order) >= errorGroupsMax {
		g.other[kind]++
		return
	}
	g.order = append(g.order, key)
	g.groups[key] = &ErrorGroup{Kind: kind, Message: clipMessage(text), Count: 1}
}

// list returns the groups, most frequent first (then by kind and message).
func (g *errorGroups) list() []ErrorGroup {
	if len(g.order) == 0 {
		return nil
	}
	out := make([]ErrorGroup, 0, len(g.order)+len(g.other))
	for _, k := range g.order {
		out = append(out, *g.groups[k])
	}
	for kind, n := range g.other {
		out = append(out, ErrorGroup{Kind: kind, Message: "(other messages)", Count: n})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// clipMessage keeps at most errorMessageMax characters of a message, on one line;
// an empty message says so.
func clipMessage(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no message)"
	}
	return errtext.Clip(s, errorMessageMax)
}

// topMessage is the most frequent message of a level's failures, for its warning.
func topMessage(l Level) string {
	if len(l.ErrorGroups) == 0 {
		return ""
	}
	g := l.ErrorGroups[0]
	return fmt.Sprintf("; most often %s «%s» (%d)", g.Kind, g.Message, g.Count)
}
