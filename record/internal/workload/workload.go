// Package workload makes the prompts of a run: synthetic prompts calibrated to a
// length in the server's own tokens, or a dataset's prompts, deterministically from
// the seed, so that the same plan and seed send the same requests.
package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// words are common English words that nearly every tokenizer (BPE or SentencePiece)
// holds as one token with a leading space, so that a prompt's length in tokens is
// close to proportional to its length in words; calibration measures the rest.
var words = strings.Fields(`the of and to in is was for that with as on by at from
his her an which or be are this had not but first one their its new after who they
have has were also two all been other when there time can year would into more
some only most she may over many such them about these made where then like any
part through well most used could world people back between city three state our
during until before high day under both long known early later each while since
life group work same last second house small family water how own name left end
best found place point game light great power large head line today book money
road story music river field army party church open order area word school form
hand case play team week month side rest night house south north west east land`)

// Workload produces the prompts of a run, deterministically from the seed: the same
// plan and seed give the same requests, which --resume relies on.
type Workload struct {
	seed      uint64
	prompt    Lengths // synthetic prompt lengths
	output    Lengths // output lengths (max_tokens); Kind "dataset": each entry's own
	maxTokens int     // fallback max_tokens of a dataset entry without its own
	// A synthetic prompt of w words after its prefix counts about a + b·w tokens
	// (calibrated); prefixTokens more with a shared prefix.
	a, b         float64
	prefixTokens int
	prefixes     []string  // shared prefix texts (--shared-prefix-tokens, --prefixes)
	prefixCDF    []float64 // cumulative mix of the prefixes
	dataset      []client.Prompt
	Calibrated   string // how the prompt length was calibrated, for the run info
}

// Config is what a synthetic workload is made of.
type Config struct {
	Seed   uint64
	Prompt Lengths // prompt tokens per request (the user turn's, in a conversation)
	Output Lengths // max_tokens per request
	// SharedPrefix tokens of every prompt are one of Prefixes distinct system
	// prompts (at least 1), chosen with the weights Mix (nil: equally often).
	SharedPrefix int
	Prefixes     int
	Mix          []float64
}

// Prompt returns request id's prompt and max_tokens. draw is the request's index
// in its level: the lengths (and the shared prefix picked) are drawn from it, not
// from id, so that every level sends the same lengths in the same order (common
// random numbers: the levels differ in concurrency, not in workload), while the
// text, led by id, stays unique across the whole run.
func (w *Workload) Prompt(id, draw int64) (client.Prompt, int) {
	if len(w.dataset) > 0 {
		p := w.dataset[id%int64(len(w.dataset))]
		mt := w.maxTokens
		if p.MaxTokens > 0 {
			mt = p.MaxTokens
		}
		if w.output.Kind != "dataset" && w.output.Kind != "" {
			mt = w.output.Draw(lengthRNG(w.seed, draw, 2))
		}
		return p, mt
	}
	target := w.prompt.Draw(lengthRNG(w.seed, draw, 1))
	prefix := w.pickPrefix(draw)
	return client.Prompt{Text: prefix + w.synthetic(id, w.words(target)), TargetTokens: target}, w.output.Draw(lengthRNG(w.seed, draw, 2))
}

// Sized is request id's synthetic prompt of target tokens (a replayed trace's
// lengths, a conversation's turn).
func (w *Workload) Sized(id int64, target int) client.Prompt {
	prefix := w.pickPrefix(id)
	return client.Prompt{Text: prefix + w.synthetic(id, w.words(target)), TargetTokens: target}
}

// PrimePrompts are one request per shared prefix, to load the prefix cache before
// a level: the prefix and a short unique tail (ids far from the run's, as the
// calibration's are). None without shared prefixes.
func (w *Workload) PrimePrompts() []client.Prompt {
	const primeID = 99999000
	out := make([]client.Prompt, len(w.prefixes))
	for k, p := range w.prefixes {
		out[k] = client.Prompt{Text: p + w.synthetic(primeID+int64(k), 4), TargetTokens: w.prefixTokens}
	}
	return out
}

// words is how many unique words make a prompt of target tokens.
func (w *Workload) words(target int) int {
	return max(1, int(math.Round((float64(target-w.prefixTokens)-w.a)/w.b)))
}

// pickPrefix chooses request id's shared prefix from the mix.
func (w *Workload) pickPrefix(id int64) string {
	switch len(w.prefixes) {
	case 0:
		return ""
	case 1:
		return w.prefixes[0]
	}
	u := lengthRNG(w.seed, id, 3).Float64()
	for i, c := range w.prefixCDF {
		if u < c {
			return w.prefixes[i]
		}
	}
	return w.prefixes[len(w.prefixes)-1]
}

// synthetic builds the unique part of a prompt, n words after its prefix. The
// request id leads it, so that no two prompts share a prefix beyond the one asked
// for and prefix caching cannot flatter the numbers.
func (w *Workload) synthetic(id int64, n int) string {
	rng := rand.New(rand.NewPCG(w.seed, uint64(id)))
	var b strings.Builder
	b.Grow(8*n + 16)
	// A fixed-width id keeps every prompt the same length in tokens (tokenizers
	// often split numbers into single digits).
	b.WriteString("request ")
	b.WriteString(fmt.Sprintf("%08d", id%100000000))
	for range n {
		b.WriteByte(' ')
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// sharedText is shared prefix k of n words (the same for every request that uses
// it; prefix 0 is the single prefix of --shared-prefix-tokens).
func sharedText(seed uint64, k, n int) string {
	if n <= 0 {
		return ""
	}
	rng := rand.New(rand.NewPCG(seed, math.MaxUint64-uint64(k)))
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	b.WriteString(". ")
	return b.String()
}

// MeasureFunc counts the tokens the server sees for a synthetic prompt text.
type MeasureFunc func(ctx context.Context, text string) (int, error)

// NewSynthetic calibrates synthetic prompts so that the server counts the lengths
// cfg.Prompt draws (within a few percent), cfg.SharedPrefix of them one of the
// shared prefixes. measure is how the server counts (nil: assume 1.3 tokens per
// word, uncalibrated).
func NewSynthetic(ctx context.Context, cfg Config, measure MeasureFunc, how string) (*Workload, error) {
	if cfg.Prompt.Kind == "dataset" || cfg.Output.Kind == "dataset" {
		return nil, errors.New("length \"dataset\" needs Options.Dataset")
	}
	median := int(math.Round(cfg.Prompt.Quantile(0.5)))
	if median <= 0 {
		return nil, errors.New("Options.PromptTokens must be positive")
	}
	if lo := int(cfg.Prompt.Quantile(0.01)); cfg.SharedPrefix > 0 && cfg.SharedPrefix >= max(1, lo) {
		return nil, fmt.Errorf("Options.SharedPrefixTokens %d must be below the prompt length (%d at the 1st percentile of Options.PromptTokens %s)", cfg.SharedPrefix, lo, cfg.Prompt)
	}
	k := max(cfg.Prefixes, 1)
	if cfg.SharedPrefix == 0 {
		k = 0
	}
	if len(cfg.Mix) > 0 && len(cfg.Mix) != k {
		return nil, fmt.Errorf("Options.PrefixMix has %d weights for %d prefixes", len(cfg.Mix), k)
	}
	w := &Workload{seed: cfg.Seed, prompt: cfg.Prompt, output: cfg.Output, prefixTokens: cfg.SharedPrefix}
	var sum float64
	for i := range k {
		wt := 1.0
		if len(cfg.Mix) > 0 {
			wt = cfg.Mix[i]
		}
		if !(wt >= 0) {
			return nil, fmt.Errorf("Options.PrefixMix weight %v: weights must not be negative", wt)
		}
		sum += wt
		w.prefixCDF = append(w.prefixCDF, sum)
	}
	if k > 0 && !(sum > 0) {
		return nil, errors.New("Options.PrefixMix: the weights sum to 0")
	}
	for i := range w.prefixCDF {
		w.prefixCDF[i] /= sum
	}
	prefixWords := func(b float64) {
		w.prefixes = nil
		for i := range k {
			w.prefixes = append(w.prefixes, sharedText(cfg.Seed, i, int(math.Round(float64(cfg.SharedPrefix)/b))))
		}
	}
	// Probe ids far from the run's ids so that the calibration prompts are not
	// the run's prompts (a server with prefix caching would otherwise remember them).
	const probeID = 99999900
	if measure == nil {
		w.a, w.b = 3*1.3, 1.3
		prefixWords(1.3)
		w.Calibrated = "uncalibrated (1.3 tokens per word assumed)"
		return w, nil
	}
	// Fit tokens = a + b·words over two sizes (no prefix), then correct the
	// intercept at the median length, with the prefix, twice.
	n1 := 8
	n2 := max(n1*2, int(float64(median)/1.3))
	m1, err := measure(ctx, w.synthetic(probeID, n1))
	if err != nil {
		return nil, fmt.Errorf("calibrating prompt length: %w", err)
	}
	m2, err := measure(ctx, w.synthetic(probeID+1, n2))
	if err != nil {
		return nil, fmt.Errorf("calibrating prompt length: %w", err)
	}
	w.b = float64(m2-m1) / float64(n2-n1)
	if w.b <= 0.1 {
		return nil, fmt.Errorf("calibrating prompt length: the server counted %d and %d tokens for %d and %d words", m1, m2, n1, n2)
	}
	w.a = float64(m1) - w.b*float64(n1)
	prefixWords(w.b)
	for i := range 2 {
		n := w.words(median)
		p := w.Sized(probeID+2+int64(i), median)
		m, err := measure(ctx, p.Text)
		if err != nil {
			return nil, fmt.Errorf("calibrating prompt length: %w", err)
		}
		if math.Abs(float64(m-median)) <= 0.005*float64(median) {
			break
		}
		// m = prefix + a + b·words: solve for the intercept the server shows.
		w.a = float64(m-w.prefixTokens) - w.b*float64(n)
	}
	w.Calibrated = fmt.Sprintf("%s: %.3f tokens per word, %.0f tokens overhead", how, w.b, w.a)
	return w, nil
}

// Lengths is request draw's prompt length and max_tokens as a synthetic workload of
// this config draws them (Workload.Prompt's draws), without building its text: what
// a pre-flight check compares with the server's context.
func (c Config) Lengths(draw int64) (prompt, output int) {
	return c.Prompt.Draw(lengthRNG(c.Seed, draw, 1)), c.Output.Draw(lengthRNG(c.Seed, draw, 2))
}
