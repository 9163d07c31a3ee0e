package analyze

import (
	"fmt"
	"math"
	"strings"
)

// The KV ceiling as the server's layout and behaviour give it, the batch ceiling
// from the server's slots, and which ceilings the valid levels confirm.

// kvCeiling is the KV ceiling in requests at once, its evidence, and a note for the
// batch evidence where the layout makes the slot count, not a pooled figure, the
// limit. A level where the server said its KV cache ran out caps the ceiling below
// it: such a level is evidence for the ceiling, not only an invalid level.
func kvCeiling(c *Capacity, all []Level) (value *float64, evidence []string, batchNote string) {
	if c != nil {
		mean := 0.0
		if c.MeanRequestTokens != nil {
			mean = *c.MeanRequestTokens
		}
		switch {
		case c.Layout == LayoutPerSlot && c.SlotContextTokens != nil && c.Slots != nil:
			n := *c.SlotContextTokens
			if mean > float64(n) {
				value = ptr(0.0)
				evidence = append(evidence, fmt.Sprintf("each of the %d slots holds one request of at most %s tokens (a cache per slot, %s): the workload's mean request of %.0f tokens does not fit a slot, so such requests fail at any concurrency",
					*c.Slots, groupDigits(n), c.LayoutEvidence, mean))
			} else {
				batchNote = fmt.Sprintf("each of the %d slots has its own KV cache of %s tokens and holds one request (%s): the slot count binds, not a pooled KV figure", *c.Slots, groupDigits(n), c.LayoutEvidence)
			}
		case c.Layout == LayoutUnknown && c.SlotContextTokens != nil && c.Slots != nil && c.KVCapacityTokens == nil && mean > 0:
			lo := float64(*c.SlotContextTokens) / mean
			if lo >= float64(*c.Slots) {
				batchNote = fmt.Sprintf("whichever the KV layout, the cache holds at least %d requests of the mean %.0f tokens (%s tokens shared, or one per slot): the %d slots bind before it",
					*c.Slots, mean, groupDigits(*c.SlotContextTokens), *c.Slots)
			} else {
				batchNote = fmt.Sprintf("the KV cache holds between %.1f requests of the mean %.0f tokens (one cache of %s tokens shared by the slots) and %d (a cache per slot): %s",
					lo, mean, groupDigits(*c.SlotContextTokens), *c.Slots, c.LayoutEvidence)
			}
		case c.ConcurrencyAtMeanRequest != nil && c.KVCapacityTokens != nil:
			v := *c.ConcurrencyAtMeanRequest
			value = &v
			what := fmt.Sprintf("the KV cache holds %s tokens (%s", groupDigits(*c.KVCapacityTokens), c.Source)
			if c.SourceDetail != "" {
				what += ": " + c.SourceDetail
			}
			evidence = append(evidence, fmt.Sprintf("%s); at the workload's mean request of %.0f prompt+output tokens that is %.1f requests at once", what, mean, v))
		}
		if ps := c.PrefixSharing; ps != nil && ps.Text != "" {
			evidence = append(evidence, ps.Text)
		}
	}
	if note := contextExceededNote(all); note != "" {
		evidence = append(evidence, note)
		if value == nil {
			batchNote = strings.TrimPrefix(batchNote+"; "+note, "; ")
		}
	}
	f := kvFailLevel(all)
	if f == nil {
		return value, evidence, batchNote
	}
	fail := offered(*f)
	ev := fmt.Sprintf("observed: the server ran out of KV cache at %s (%d of %d requests failed with «%s»)",
		offeredLabel(*f), f.ErrorKinds[KindKVExhausted], f.Requests, kvMessage(*f))
	var ok *Level
	for _, l := range sortedLevels(all) {
		if offered(l) < fail && l.ErrorKinds[KindKVExhausted] == 0 {
			l := l
			ok = &l
		}
	}
	if ok != nil {
		ev += fmt.Sprintf("; %s ran without KV errors", offeredLabel(*ok))
	}
	if value == nil || *value >= fail {
		v := fail
		if ok != nil {
			v = offered(*ok)
		}
		if value != nil {
			ev += fmt.Sprintf(": the figure above (%.1f) is not reached, the ceiling lies below %g", *value, fail)
		}
		value = &v
	}
	return value, append(evidence, ev), batchNote
}

// contextExceededNote says how many requests the server refused as longer than a
// sequence may hold (context_exceeded), with its words: with llama.cpp's cache per
// slot that is a request longer than one slot's n_ctx, at any concurrency.
func contextExceededNote(all []Level) string {
	n, msg := 0, ""
	for _, l := range all {
		n += l.ErrorKinds[KindContextExceeded]
		for _, g := range l.ErrorGroups {
			if g.Kind == KindContextExceeded && msg == "" {
				msg = g.Message
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d requests were longer than a sequence's context and failed («%s»): they fail at any concurrency, whatever the cache holds", n, msg)
}

// slotBatch makes the batch ceiling the server's declared slot count (llama.cpp
// total_slots, SGLang max_running_requests) when the client's decode plateau lies
// at it: the client counts a slot's prefill as waiting, so its decode concurrency
// rounds below the slots (3.x of 4 on a loaded machine). A plateau far below the
// slots is another limit, and stays as measured.
func slotBatch(v float64, ev string, slots *int64) (float64, string) {
	if slots == nil || *slots <= 0 {
		return v, ev
	}
	s := float64(*slots)
	if v <= s+1e-9 && v >= 0.6*s {
		if v == s {
			return s, ev + fmt.Sprintf("; the server declares %d slots, as measured", *slots)
		}
		return s, fmt.Sprintf("the server declares %d slots: its batch limit; the client's evidence: %s (the client counts a slot's prefill as waiting, so decode concurrency stays below the slots)", *slots, ev)
	}
	return v, ev + fmt.Sprintf("; the server declares %d slots", *slots)
}

// lastValid is the highest offered concurrency among the valid levels (0: none).
func lastValid(levels []Level) float64 {
	top := 0.0
	for _, l := range levels {
		top = math.Max(top, offered(l))
	}
	return top
}

// kvReached says whether the data reach a KV figure: a valid level at or beyond it,
// or a level where the server said its KV cache ran out (a server-confirmed limit).
func kvReached(kv float64, valid, all []Level) bool {
	if kv <= lastValid(valid)*(1+tieTolerance) {
		return true
	}
	f := kvFailLevel(all)
	return f != nil && offered(*f) >= kv
}

// confirmed is the ceilings the data can stand for: a KV figure they do not reach
// is left out (it is a prediction, kvPrediction).
func confirmed(c Ceilings, valid, all []Level) Ceilings {
	if c.KV != nil && !kvReached(*c.KV, valid, all) {
		c.KV = nil
	}
	return c
}

// kvPrediction is the KV figure as a prediction when the data do not reach it.
func kvPrediction(c Ceilings, valid, all []Level) *Prediction {
	top := lastValid(valid)
	if c.KV == nil || top <= 0 || kvReached(*c.KV, valid, all) {
		return nil
	}
	return &Prediction{Limit: "kv", Concurrency: *c.KV, ValidUpTo: top,
		Text: fmt.Sprintf("the KV ceiling is not reached by valid data up to concurrency %g; the KV figure predicts ~%.0f concurrent requests: a prediction, not the realistic ceiling", top, *c.KV)}
}
