package analyze

import (
	"testing"

	"github.com/ceiling-llm/ceiling/internal/peertest"
)

// peerDir holds real vLLM `bench serve` results with per-request arrays and vLLM's
// own summary numbers (see its INDEX.md). It is read in place, never copied.
const peerDir = "../../shared/peer-results"

// loadPeerResults reads the vLLM results of peerDir.
func loadPeerResults(t *testing.T) map[string]peertest.Result { return peertest.VLLM(t, peerDir) }
