package sse

import "testing"

// BenchmarkDecodeChunk is the per-chunk decoding cost on a typical vLLM chunk.
func BenchmarkDecodeChunk(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-8f1f","object":"chat.completion.chunk","created":1733000000,"model":"meta-llama/Llama-3.3-70B-Instruct","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`)
	b.ReportAllocs()
	for range b.N {
		if c, err := Decode(nil, data); err != nil || !c.Content {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeChunkSlow is the same chunk through encoding/json, for comparison.
func BenchmarkDecodeChunkSlow(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-8f1f","object":"chat.completion.chunk","created":1733000000,"model":"meta-llama/Llama-3.3-70B-Instruct","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`)
	b.ReportAllocs()
	for range b.N {
		if c, err := slowChunk(data); err != nil || !c.Content {
			b.Fatal(err)
		}
	}
}
