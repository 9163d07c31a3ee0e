package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/ceiling-llm/ceiling/record/internal/client"
)

// Datasets: a file of real prompts, in one of three formats told apart by content:
// ShareGPT JSON (an array, or JSONL, of {"conversations": [{"from", "value"}...]}),
// OpenAI-style {"messages": [...]} JSONL, and plain {"prompt": "..."} JSONL. Where the
// dataset holds the answer (ShareGPT's first gpt turn, a final assistant message),
// its length is the request's max_tokens, so output lengths are the dataset's too.

// Entry is one dataset request: its prompt and the dataset's own answer, if any.
type Entry struct {
	Prompt client.Prompt
	Answer string // "" when the dataset has none
	text   string // the prompt's text as a whole, for counting its tokens
}

// Dataset is a loaded dataset file.
type Dataset struct {
	Format  string // "sharegpt", "messages" or "prompt" (the first entry's)
	Entries []Entry
	Skipped int // ShareGPT conversations without a human turn
}

// LoadDataset reads a dataset file. A bad entry is an error naming its line (or,
// in a JSON array, its index).
func LoadDataset(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening dataset: %w", err)
	}
	defer f.Close()
	return readDataset(f, path)
}

func readDataset(r io.Reader, name string) (*Dataset, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	d := &Dataset{}
	add := func(where string, raw []byte) error {
		e, format, ok, err := parseEntry(raw)
		if err != nil {
			return fmt.Errorf("%s %s: %v", name, where, err)
		}
		if !ok {
			d.Skipped++
			return nil
		}
		if d.Format == "" {
			d.Format = format
		}
		d.Entries = append(d.Entries, e)
		return nil
	}
	first, err := peekNonSpace(br)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if first == '[' {
		// A JSON array (ShareGPT's usual form): decode element by element.
		dec := json.NewDecoder(br)
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%s: not a JSON array: %v", name, err)
		}
		for i := 0; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, fmt.Errorf("%s element %d: not JSON: %v", name, i, err)
			}
			if err := add(fmt.Sprintf("element %d", i), raw); err != nil {
				return nil, err
			}
		}
	} else {
		for n := 1; ; n++ {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				if aerr := add("line "+strconv.Itoa(n), line); aerr != nil {
					return nil, aerr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
		}
	}
	if len(d.Entries) == 0 {
		return nil, fmt.Errorf("%s: no prompts", name)
	}
	return d, nil
}

// peekNonSpace returns the first byte that is not white space, without consuming it.
func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		if b[0] != ' ' && b[0] != '\t' && b[0] != '\r' && b[0] != '\n' {
			return b[0], nil
		}
		_, _ = br.ReadByte()
	}
}

// parseEntry reads one dataset entry. ok is false for a ShareGPT conversation
// without a human turn (skipped, as vLLM's benchmark skips them).
func parseEntry(raw []byte) (e Entry, format string, ok bool, err error) {
	var l struct {
		Prompt        *string           `json:"prompt"`
		Messages      []json.RawMessage `json:"messages"`
		Conversations []struct {
			From  string `json:"from"`
			Value string `json:"value"`
		} `json:"conversations"`
		MaxTokens *int `json:"max_tokens"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return e, "", false, fmt.Errorf("not a JSON object: %v", err)
	}
	kinds := 0
	for _, b := range []bool{l.Prompt != nil, len(l.Messages) > 0, len(l.Conversations) > 0} {
		if b {
			kinds++
		}
	}
	if kinds > 1 {
		return e, "", false, errors.New(`has more than one of "prompt", "messages" and "conversations"; want one`)
	}
	switch {
	case l.Prompt != nil:
		format = "prompt"
		e.Prompt.Text, e.text = *l.Prompt, *l.Prompt
	case len(l.Messages) > 0:
		format = "messages"
		type msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		ms := make([]msg, len(l.Messages))
		for i, m := range l.Messages {
			if json.Unmarshal(m, &ms[i]) != nil || ms[i].Role == "" {
				return e, "", false, fmt.Errorf("messages[%d] is not an object with a role", i)
			}
		}
		// A final assistant message is the dataset's answer, not part of the prompt.
		last := len(ms) - 1
		var answer string
		if ms[last].Role == "assistant" && json.Unmarshal(ms[last].Content, &answer) == nil && len(ms) > 1 {
			e.Answer = answer
			l.Messages = l.Messages[:last]
			ms = ms[:last]
		}
		e.Prompt.Messages = l.Messages
		var b strings.Builder
		for _, m := range ms {
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
		e.text = b.String()
	case len(l.Conversations) > 0:
		format = "sharegpt"
		var system, human string
		found := false
		for _, t := range l.Conversations {
			switch strings.ToLower(t.From) {
			case "system":
				if !found {
					system = t.Value
				}
			case "human", "user":
				if !found {
					human, found = t.Value, true
				}
			case "gpt", "assistant", "chatgpt", "bard", "bing", "model":
				if found && e.Answer == "" {
					e.Answer = t.Value
				}
			}
		}
		if !found {
			return e, format, false, nil
		}
		e.text = human
		if system == "" {
			e.Prompt.Text = human
		} else {
			s, _ := json.Marshal(map[string]string{"role": "system", "content": system})
			u, _ := json.Marshal(map[string]string{"role": "user", "content": human})
			e.Prompt.Messages = []json.RawMessage{s, u}
			e.text = system + "\n" + human
		}
	default:
		return e, "", false, errors.New(`want {"prompt": ...}, {"messages": [...]} or {"conversations": [...]}`)
	}
	if l.MaxTokens != nil {
		if *l.MaxTokens <= 0 {
			return e, "", false, errors.New("max_tokens must be positive")
		}
		e.Prompt.MaxTokens = *l.MaxTokens
	}
	return e, format, true, nil
}

// Filter keeps the dataset entries whose lengths in tokens are within bounds
// (0: no bound): --dataset-filter min-prompt=4,max-prompt=2048,min-output=4,max-output=1024.
type Filter struct{ MinPrompt, MaxPrompt, MinOutput, MaxOutput int }

// FilterSyntax is the accepted form of --dataset-filter, for error messages.
const FilterSyntax = "a comma-separated list of min-prompt=N, max-prompt=N, min-output=N, max-output=N"

// ParseFilter reads --dataset-filter.
func ParseFilter(s string) (Filter, error) {
	var f Filter
	if strings.TrimSpace(s) == "" {
		return f, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil || n < 0 {
			return Filter{}, fmt.Errorf("%q: want %s", kv, FilterSyntax)
		}
		switch strings.TrimSpace(k) {
		case "min-prompt":
			f.MinPrompt = n
		case "max-prompt":
			f.MaxPrompt = n
		case "min-output":
			f.MinOutput = n
		case "max-output":
			f.MaxOutput = n
		default:
			return Filter{}, fmt.Errorf("%q: unknown key %q; want %s", kv, k, FilterSyntax)
		}
	}
	return f, nil
}

func (f Filter) keep(prompt, output int, hasOutput bool) bool {
	if prompt < f.MinPrompt || (f.MaxPrompt > 0 && prompt > f.MaxPrompt) {
		return false
	}
	if hasOutput && (output < f.MinOutput || (f.MaxOutput > 0 && output > f.MaxOutput)) {
		return false
	}
	return true
}

// DatasetConfig is how a dataset becomes a run's requests.
type DatasetConfig struct {
	Seed uint64
	// Output lengths: Kind "" uses each entry's own (its max_tokens, else its
	// answer's length, else MaxTokens); "dataset" the same but keeps only entries
	// that have their own; any other draws them.
	Output    Lengths
	MaxTokens int
	Filter    Filter
	// MaxTotal drops entries whose prompt + output exceed it (0: no cap), as vLLM's
	// benchmark drops ShareGPT entries that do not fit the context.
	MaxTotal int
	// Need is how many entries to prepare (counting each costs a /tokenize call);
	// the run cycles through them. 0: all.
	Need int
}

// NewDataset prepares a dataset's entries in file order: counts their prompt and
// answer tokens (count nil: estimated at 4 characters per token), filters and caps
// them, until cfg.Need are kept.
func NewDataset(ctx context.Context, d *Dataset, cfg DatasetConfig, count MeasureFunc, how string) (*Workload, error) {
	w := &Workload{seed: cfg.Seed, output: cfg.Output, maxTokens: cfg.MaxTokens}
	counted := count != nil
	if count == nil {
		count = func(_ context.Context, s string) (int, error) { return max(1, (len(s)+3)/4), nil }
		how = "estimated at 4 characters per token"
	}
	need := cfg.Need
	if need <= 0 || need > len(d.Entries) {
		need = len(d.Entries)
	}
	type counts struct {
		prompt, answer int
		err            error
	}
	dropped := 0
	// Count in batches, 8 requests at a time, until enough entries are kept.
	for start := 0; start < len(d.Entries) && len(w.dataset) < need; {
		end := min(len(d.Entries), start+max(16, 2*(need-len(w.dataset))))
		res := make([]counts, end-start)
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		for i := start; i < end; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				e := d.Entries[i]
				c := &res[i-start]
				c.prompt, c.err = count(ctx, e.text)
				if c.err == nil && e.Answer != "" && e.Prompt.MaxTokens == 0 {
					c.answer, c.err = count(ctx, e.Answer)
				}
			}(i)
		}
		wg.Wait()
		for i := start; i < end && len(w.dataset) < need; i++ {
			c := res[i-start]
			if c.err != nil {
				return nil, fmt.Errorf("counting the tokens of dataset entry %d: %w", i+1, c.err)
			}
			p := d.Entries[i].Prompt
			own := p.MaxTokens
			if own == 0 {
				own = c.answer
			}
			out := own
			switch {
			case cfg.Output.Kind == "dataset" && own == 0:
				dropped++
				continue
			case cfg.Output.Kind == "" && own == 0:
				out = cfg.MaxTokens
			case cfg.Output.Kind != "" && cfg.Output.Kind != "dataset":
				out = 0 // drawn per request
			}
			if !cfg.Filter.keep(c.prompt, out, out > 0) || (cfg.MaxTotal > 0 && c.prompt+max(out, 1) > cfg.MaxTotal) {
				dropped++
				continue
			}
			p.MaxTokens = max(out, 0)
			if counted {
				p.TargetTokens = c.prompt
			}
			w.dataset = append(w.dataset, p)
		}
		start = end
	}
	if len(w.dataset) == 0 {
		return nil, fmt.Errorf("the dataset has no entry left after the filter and the length cap (%d dropped)", dropped)
	}
	w.Calibrated = fmt.Sprintf("dataset (%s, %d entries used, %d dropped by filter or cap; lengths %s)", d.Format, len(w.dataset), dropped, how)
	return w, nil
}
