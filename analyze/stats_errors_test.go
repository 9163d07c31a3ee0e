package analyze

import (
	"strings"
	"testing"
)

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		status int32
		err    string
		tok    bool
		want   string
	}{
		{429, "HTTP 429", false, "http_429"},
		{503, "", false, "http_503"},
		{0, "context deadline exceeded", false, "timeout"},
		{0, "read tcp: connection reset by peer", true, "reset"},
		{0, "dial tcp: connect: connection refused", false, "refused"},
		{200, "unexpected EOF", true, "disconnect"},
		{200, "invalid JSON in chunk", true, "protocol"},
		{200, "", false, "no_tokens"},
		{200, "something odd", true, "other"},
		// The engines' own words about their KV cache decide before the status.
		// llama.cpp server-context.cpp, inside a 200 stream and as an HTTP 500 body:
		{200, "server error: 500: Context size has been exceeded.", true, KindKVExhausted},
		{500, "HTTP 500 Internal Server Error: Context size has been exceeded.", false, KindKVExhausted},
		{200, "server error: failed to find free space in the KV cache", false, KindKVExhausted},
		// llama.cpp exceed_context_size_error (HTTP 400): one request longer than a slot.
		{400, "HTTP 400 Bad Request: request (300 tokens) exceeds the available context size (256 tokens), try increasing it", false, KindContextExceeded},
		{400, "HTTP 400 Bad Request: input (900 tokens) is larger than the max context size (512 tokens). skipping", false, KindContextExceeded},
		// vLLM's request validation.
		{400, "HTTP 400 Bad Request: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", false, KindContextExceeded},
		// SGLang's allocator and TGI's block allocator.
		{500, "HTTP 500 Internal Server Error: Prefill out of memory. Try to lower your batch size.", false, KindKVExhausted},
		{200, "server error: Request failed during generation: Server error: Out of available cache blocks: asked 1024, only 896 free blocks", true, KindKVExhausted},
	} {
		if got := errorKind(tc.status, tc.err, tc.tok); got != tc.want {
			t.Errorf("errorKind(%d, %q) = %q, want %q", tc.status, tc.err, got, tc.want)
		}
	}
}

func TestErrorGroups(t *testing.T) {
	var g errorGroups
	for range 3 {
		g.add(KindKVExhausted, "server error: Context size has been exceeded.")
	}
	g.add(KindContextExceeded, "HTTP 400 Bad Request: request (300 tokens) exceeds the available context size (256 tokens)")
	g.add(KindContextExceeded, "HTTP 400 Bad Request: request (312 tokens) exceeds the available context size (256 tokens)")
	g.add("timeout", "")
	got := g.list()
	want := []ErrorGroup{
		{KindKVExhausted, "server error: Context size has been exceeded.", 3},
		{KindContextExceeded, "HTTP 400 Bad Request: request (300 tokens) exceeds the available context size (256 tokens)", 2},
		{"timeout", "(no message)", 1},
	}
	if len(got) != len(want) {
		t.Fatalf("groups = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("group %d = %+v, want %+v", i, got[i], want[i])
		}
	}

	// Past errorGroupsMax distinct messages, the rest are counted per kind.
	var many errorGroups
	for i := range errorGroupsMax + 3 {
		many.add("other", "odd failure "+strings.Repeat("x", i))
	}
	l := many.list()
	if len(l) != errorGroupsMax+1 || l[0].Message != "(other messages)" || l[0].Count != 3 {
		t.Errorf("overflow groups = %+v, want %d groups with 3 in (other messages) first", l, errorGroupsMax+1)
	}
	if m := clipMessage(strings.Repeat("é", errorMessageMax+5)); len([]rune(m)) != errorMessageMax+1 {
		t.Errorf("clipMessage kept %d runes, want %d and an ellipsis", len([]rune(m)), errorMessageMax)
	}
}
