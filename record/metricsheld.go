package record

import (
	"fmt"
	"sync"

	"github.com/ceiling-llm/ceiling/trace"
)

// Scraped samples wait in memory until the level they fall in is sealed into a
// metrics part. What waits is bounded: a name or label text repeated scrape after
// scrape is held once (interned), and at most maxHeldSamples samples wait; beyond
// them the scrapes until the next seal are dropped, with one warning naming the
// source. A real server's page (a few thousand series a second) fills that after
// more than an hour in one level.

// maxHeldSamples bounds the samples held between two seals (~48 bytes each once
// their strings are interned: about 100 MB).
const maxHeldSamples = 1 << 21

// maxInterned bounds the distinct strings interned; a page that invents new label
// values every scrape gets its later strings held as they are.
const maxInterned = 1 << 16

// heldMetrics is the samples scraped since the last seal.
type heldMetrics struct {
	mu      sync.Mutex
	samples []trace.MetricSample
	max     int               // maxHeldSamples; smaller in tests
	strs    map[string]string // interned names and label texts
	noted   map[string]bool   // notes already warned about
	full    bool              // the bound was reached since the last seal
}

// keep adds one scrape's samples from source, as far as the bound allows, and
// returns the warnings to give (at most once each per run): the scrape's own note
// (a page past pageBounds) and the bound reached.
func (h *heldMetrics) keep(source string, s []trace.MetricSample, note string) (warnings []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.strs == nil {
		h.strs, h.noted = map[string]string{}, map[string]bool{}
	}
	if h.max == 0 {
		h.max = maxHeldSamples
	}
	if note != "" {
		if msg := fmt.Sprintf("%s: %s", source, note); !h.noted[msg] {
			h.noted[msg] = true
			warnings = append(warnings, msg)
		}
	}
	room := h.max - len(h.samples)
	if len(s) > room {
		s = s[:max(room, 0)]
		if !h.full {
			h.full = true
			if msg := fmt.Sprintf("%s: %d metric samples wait for the level to be sealed: the scrapes until then are dropped (a page this large every scrape is not a server's)", source, h.max); !h.noted[msg] {
				h.noted[msg] = true
				warnings = append(warnings, msg)
			}
		}
	}
	for _, m := range s {
		m.Name, m.Labels = h.intern(m.Name), h.intern(m.Labels)
		h.samples = append(h.samples, m)
	}
	return warnings
}

// intern returns the held copy of v, holding it while there is room.
func (h *heldMetrics) intern(v string) string {
	if w, ok := h.strs[v]; ok {
		return w
	}
	if len(h.strs) < maxInterned {
		h.strs[v] = v
	}
	return v
}

// take returns the samples held and starts over.
func (h *heldMetrics) take() []trace.MetricSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.samples
	h.samples, h.full = nil, false
	return s
}

// keepMetrics holds one scrape's samples from source (keep), warning as it says.
func (r *recorder) keepMetrics(source string, s []trace.MetricSample, note string) {
	for _, w := range r.metrics.keep(source, s, note) {
		r.warn(w)
	}
}

// noteMetrics warns, once, about a scrape's note from source.
func (r *recorder) noteMetrics(source, note string) { r.keepMetrics(source, nil, note) }
