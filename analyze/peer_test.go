package analyze

import (
	"testing"

	"github.com/ceiling-llm/ceiling/internal/peertest"
)

// loadPeerResults reads the shared real vLLM `bench serve` results with per-request
// arrays and vLLM's own summary numbers (see their INDEX.md), in place, never copied.
func loadPeerResults(t *testing.T) map[string]peertest.Result { return peertest.VLLM(t) }
