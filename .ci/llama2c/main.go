// Command llama2c writes a random-weight llama2.c checkpoint (Karpathy's format) that
// llama.cpp's llama-convert-llama2c-to-ggml turns into a GGUF model for tests.
//
// The weights are random, but shaped so that the model can never sample tokens
// 0..258 (<unk>, <s>, </s> and the 256 byte-fallback tokens): random byte tokens form
// invalid UTF-8, and llama-server then fails the request mid-stream. Dimension 0 of
// the residual stream is held at a constant (the embeddings carry it, wo and w2 never
// write to it), so after the final RMS norm h[0] > 0, and the banned classifier rows
// are [-B, 0, ...], which makes their logits very negative. The model never emits EOS:
// every request runs to max_tokens.
//
// Usage: go run ./.ci/llama2c -o r64.bin [-dim 64 -hidden 192 -layers 2 -heads 4 ...]
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

func main() {
	out := flag.String("o", "model.bin", "output checkpoint path")
	dim := flag.Int("dim", 64, "model dimension")
	hidden := flag.Int("hidden", 192, "feed-forward hidden dimension")
	layers := flag.Int("layers", 2, "transformer layers")
	heads := flag.Int("heads", 4, "attention heads")
	kvHeads := flag.Int("kv-heads", 4, "key/value heads")
	vocab := flag.Int("vocab", 32000, "vocabulary size (llama-spm has 32000)")
	seqLen := flag.Int("seq-len", 2048, "maximum sequence length")
	seed := flag.Uint64("seed", 42, "random seed")
	flag.Parse()
	if err := write(*out, *dim, *hidden, *layers, *heads, *kvHeads, *vocab, *seqLen, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "llama2c:", err)
		os.Exit(1)
	}
}

func write(path string, dim, hidden, layers, heads, kvHeads, vocab, seqLen int, seed uint64) error {
	const banned = 259 // <unk>, <s>, </s>, <0x00>..<0xFF>
	const constant = 4.0
	const ban = 30.0
	scaleCls := 2.5 / math.Sqrt(float64(dim))
	scaleLin := 0.3 / math.Sqrt(float64(dim))
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	// A negative vocab size tells the converter that a separate classifier follows.
	header := []int32{int32(dim), int32(hidden), int32(layers), int32(heads), int32(kvHeads), -int32(vocab), int32(seqLen)}
	if err := binary.Write(w, binary.LittleEndian, header); err != nil {
		return err
	}
	put := func(n int, value func(i int) float64) error {
		buf := make([]byte, 4)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(buf, math.Float32bits(float32(value(i))))
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
		return nil
	}
	normal := func(int) float64 { return rng.NormFloat64() }
	one := func(int) float64 { return 1 }
	kvDim := dim * kvHeads / heads
	headSize := dim / heads
	tensors := []struct {
		n     int
		value func(i int) float64
	}{
		{vocab * dim, func(i int) float64 { // token embeddings: constant on dimension 0
			if i%dim == 0 {
				return constant
			}
			return normal(i)
		}},
		{layers * dim, one}, // rms_att
		{layers * dim * dim, func(i int) float64 { return normal(i) * scaleLin }},   // wq
		{layers * kvDim * dim, func(i int) float64 { return normal(i) * scaleLin }}, // wk
		{layers * kvDim * dim, func(i int) float64 { return normal(i) * scaleLin }}, // wv
		{layers * dim * dim, func(i int) float64 { // wo: output row 0 stays zero
			if (i/dim)%dim == 0 {
				return 0
			}
			return normal(i) * scaleLin
		}},
		{layers * dim, one}, // rms_ffn
		{layers * hidden * dim, func(i int) float64 { return normal(i) * scaleLin }}, // w1
		{layers * dim * hidden, func(i int) float64 { // w2: output row 0 stays zero
			if (i/hidden)%dim == 0 {
				return 0
			}
			return normal(i) * scaleLin * math.Sqrt(float64(dim)/float64(hidden))
		}},
		{layers * hidden * dim, func(i int) float64 { return normal(i) * scaleLin }}, // w3
		{dim, one}, // rms_final
		{seqLen * headSize, func(int) float64 { return 0 }}, // freq_cis (ignored by the converter)
		{vocab * dim, func(i int) float64 { // classifier
			tok, d := i/dim, i%dim
			if tok < banned {
				if d == 0 {
					return -ban
				}
				return 0
			}
			if d == 0 {
				return 0
			}
			return normal(i) * scaleCls
		}},
	}
	for _, t := range tensors {
		if err := put(t.n, t.value); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
