// Package workload makes the prompts of a run: synthetic prompts calibrated to a
// length in the server's own tokens, or a dataset's prompts, deterministically from
// the seed, so that the same plan and seed send the same requests.
package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
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
	seed       uint64
	maxTokens  int
	target     int             // prompt tokens aimed at (synthetic mode)
	unique     int             // words in the unique part of a synthetic prompt
	prefix     string          // shared prefix text (--shared-prefix-tokens)
	dataset    []client.Prompt // dataset mode
	Calibrated string          // how the prompt length was calibrated, for the run info
}

// LoadDataset reads a JSONL file of {"prompt": "..."} or {"messages": [...]} lines,
// each with an optional "max_tokens". A bad line is an error naming its number.
func LoadDataset(path string) ([]client.Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening dataset: %w", err)
	}
	defer f.Close()
	return readDataset(f, path)
}

func readDataset(r io.Reader, name string) ([]client.Prompt, error) {
	var out []client.Prompt
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var l struct {
				Prompt    *string           `json:"prompt"`
				Messages  []json.RawMessage `json:"messages"`
				MaxTokens *int              `json:"max_tokens"`
			}
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				return nil, fmt.Errorf("%s line %d: not a JSON object: %v", name, n, jerr)
			}
			var p client.Prompt
			switch {
			case l.Prompt != nil && len(l.Messages) > 0:
				return nil, fmt.Errorf("%s line %d: has both \"prompt\" and \"messages\"; want one", name, n)
			case l.Prompt != nil:
				p.Text = *l.Prompt
			case len(l.Messages) > 0:
				for i, m := range l.Messages {
					var msg struct {
						Role string `json:"role"`
					}
					if json.Unmarshal(m, &msg) != nil || msg.Role == "" {
						return nil, fmt.Errorf("%s line %d: messages[%d] is not an object with a role", name, n, i)
					}
				}
				p.Messages = l.Messages
			default:
				return nil, fmt.Errorf("%s line %d: want {\"prompt\": ...} or {\"messages\": [...]}", name, n)
			}
			if l.MaxTokens != nil {
				if *l.MaxTokens <= 0 {
					return nil, fmt.Errorf("%s line %d: max_tokens must be positive", name, n)
				}
				p.MaxTokens = *l.MaxTokens
			}
			out = append(out, p)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no prompts", name)
	}
	return out, nil
}

// NewDataset serves dataset prompts in order, cycling.
func NewDataset(prompts []client.Prompt, maxTokens int) *Workload {
	return &Workload{dataset: prompts, maxTokens: maxTokens, Calibrated: "dataset"}
}

// Prompt returns request id's prompt and max_tokens.
func (w *Workload) Prompt(id int64) (client.Prompt, int) {
	if len(w.dataset) > 0 {
		p := w.dataset[id%int64(len(w.dataset))]
		mt := w.maxTokens
		if p.MaxTokens > 0 {
			mt = p.MaxTokens
		}
		return p, mt
	}
	return client.Prompt{Text: w.synthetic(id, w.unique), TargetTokens: w.target}, w.maxTokens
}

// synthetic builds a prompt of n unique words after the shared prefix. The request
// id leads the unique part, so that no two prompts share a prefix beyond the one
// asked for and prefix caching cannot flatter the numbers.
func (w *Workload) synthetic(id int64, n int) string {
	rng := rand.New(rand.NewPCG(w.seed, uint64(id)))
	var b strings.Builder
	b.Grow(len(w.prefix) + 8*n + 16)
	b.WriteString(w.prefix)
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

// sharedText is the common prefix of n words (the same for every request).
func sharedText(seed uint64, n int) string {
	if n <= 0 {
		return ""
	}
	rng := rand.New(rand.NewPCG(seed, math.MaxUint64))
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

// NewSynthetic calibrates synthetic prompts so that the server counts
// promptTokens (within a few percent), sharedPrefix of them common to every request.
// measure is how the server counts (nil: assume 1.3 tokens per word, uncalibrated).
func NewSynthetic(ctx context.Context, seed uint64, promptTokens, sharedPrefix, maxTokens int, measure MeasureFunc, how string) (*Workload, error) {
	if promptTokens <= 0 {
		return nil, errors.New("--prompt-tokens must be positive")
	}
	if sharedPrefix >= promptTokens {
		return nil, fmt.Errorf("--shared-prefix-tokens %d must be below --prompt-tokens %d", sharedPrefix, promptTokens)
	}
	w := &Workload{seed: seed, maxTokens: maxTokens, target: promptTokens}
	// Probe ids far from the run's ids so that the calibration prompts are not
	// the run's prompts (a server with prefix caching would otherwise remember them).
	const probeID = 99999900
	if measure == nil {
		w.prefix = sharedText(seed, int(float64(sharedPrefix)/1.3))
		w.unique = max(1, int(float64(promptTokens-sharedPrefix)/1.3)-3)
		w.Calibrated = "uncalibrated (1.3 tokens per word assumed)"
		return w, nil
	}
	// Fit tokens = a + b·words over two sizes, then check and correct once.
	n1 := 8
	n2 := max(n1*2, int(float64(promptTokens)/1.3))
	m1, err := measure(ctx, w.synthetic(probeID, n1))
	if err != nil {
		return nil, fmt.Errorf("calibrating prompt length: %w", err)
	}
	m2, err := measure(ctx, w.synthetic(probeID+1, n2))
	if err != nil {
		return nil, fmt.Errorf("calibrating prompt length: %w", err)
	}
	b := float64(m2-m1) / float64(n2-n1)
	if b <= 0.1 {
		return nil, fmt.Errorf("calibrating prompt length: the server counted %d and %d tokens for %d and %d words", m1, m2, n1, n2)
	}
	a := float64(m1) - b*float64(n1)
	if sharedPrefix > 0 {
		w.prefix = sharedText(seed, int(math.Round(float64(sharedPrefix)/b)))
	}
	// The shared prefix shifts the intercept; measure it rather than assume.
	w.unique = max(1, int(math.Round((float64(promptTokens)-a)/b)))
	if sharedPrefix > 0 {
		w.unique = max(1, int(math.Round((float64(promptTokens-sharedPrefix)-a)/b)))
	}
	for range 2 {
		m, err := measure(ctx, w.synthetic(probeID+2, w.unique))
		if err != nil {
			return nil, fmt.Errorf("calibrating prompt length: %w", err)
		}
		diff := float64(promptTokens - m)
		if math.Abs(diff) <= 0.01*float64(promptTokens) {
			break
		}
		w.unique = max(1, w.unique+int(math.Round(diff/b)))
	}
	w.Calibrated = fmt.Sprintf("%s: %.3f tokens per word, %.0f tokens overhead", how, b, a)
	return w, nil
}
