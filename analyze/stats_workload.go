package analyze

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/ceiling-llm/ceiling/trace"
)

// The workload as it was, per level: the prompt and output lengths recorded beside
// those asked for (target_prompt_tokens, max_tokens), the share of prompt tokens
// the server served from its prefix cache (cached_tokens), and for multi-turn
// conversations (schema version 2) the same by turn, with the TTFT of first and
// later turns: a conversation's later turns resend its history, which a prefix
// cache turns into a shorter prefill.

// workloadColumns are what the workload pass reads; turn only where the trace has it.
func workloadColumns(withTurn bool) []colSpec {
	c := []colSpec{
		{Name: trace.ColRunID, Type: arrow.STRING, List: false},
		{Name: trace.ColLevel, Type: arrow.INT32, List: false},
		{Name: trace.ColWarmup, Type: arrow.BOOL, List: false},
		{Name: trace.ColStatus, Type: arrow.INT32, List: false},
		{Name: trace.ColError, Type: arrow.STRING, List: false},
		{Name: trace.ColSentNs, Type: arrow.INT64, List: false},
		{Name: trace.ColFirstTokenNs, Type: arrow.INT64, List: false},
		{Name: trace.ColPromptTokens, Type: arrow.INT32, List: false},
		{Name: trace.ColOutputTokens, Type: arrow.INT32, List: false},
		{Name: trace.ColCachedTokens, Type: arrow.INT32, List: false},
		{Name: trace.ColTargetPromptTokens, Type: arrow.INT32, List: false},
		{Name: trace.ColMaxTokens, Type: arrow.INT32, List: false},
	}
	if withTurn {
		c = append(c, colSpec{Name: trace.ColTurn, Type: arrow.INT32, List: false})
	}
	return c
}

// workloadAcc accumulates one level.
// Lengths are integers, held as counts per length (intcounts.go); a turn's TTFTs
// spill to disk like the levels' latencies (spill.go).
type workloadAcc struct {
	target, prompt, maxTok, output intCounts
	cachedN                        int
	cached, cachedPrompt           float64
	turns                          map[int]*turnAcc
}

type turnAcc struct {
	prompt               intCounts
	ttft                 spillCol[int64]
	cached, cachedPrompt float64
	cachedN              int
}

// workloadPass is the third pass: per run and level.
type workloadPass struct {
	levels map[string]map[int32]*workloadAcc
	spill  *spillDir
}

func newWorkloadPass(spill *spillDir) *workloadPass {
	return &workloadPass{levels: map[string]map[int32]*workloadAcc{}, spill: spill}
}

// scanWorkload runs the pass over one trace file.
func (p *workloadPass) scan(ctx context.Context, f trace.File) error {
	withTurn, err := f.HasColumn(trace.ColTurn)
	if err != nil {
		return err
	}
	return scanTrace(ctx, f, workloadColumns(withTurn), func(rec arrow.Record, cols map[string]int) error {
		return p.batch(rec, cols, withTurn)
	})
}

func (p *workloadPass) batch(rec arrow.Record, cols map[string]int, withTurn bool) error {
	var err error
	str := func(name string) *array.String {
		var a *array.String
		if err == nil {
			a, err = column[*array.String](rec, cols, name)
		}
		return a
	}
	i32 := func(name string) *array.Int32 {
		var a *array.Int32
		if err == nil {
			a, err = column[*array.Int32](rec, cols, name)
		}
		return a
	}
	i64 := func(name string) *array.Int64 {
		var a *array.Int64
		if err == nil {
			a, err = column[*array.Int64](rec, cols, name)
		}
		return a
	}
	runID, errText := str(trace.ColRunID), str(trace.ColError)
	level, status := i32(trace.ColLevel), i32(trace.ColStatus)
	prompt, output, cached := i32(trace.ColPromptTokens), i32(trace.ColOutputTokens), i32(trace.ColCachedTokens)
	target, maxTok := i32(trace.ColTargetPromptTokens), i32(trace.ColMaxTokens)
	sent, first := i64(trace.ColSentNs), i64(trace.ColFirstTokenNs)
	var turn *array.Int32
	if withTurn {
		turn = i32(trace.ColTurn)
	}
	var warmup *array.Boolean
	if err == nil {
		warmup, err = column[*array.Boolean](rec, cols, trace.ColWarmup)
	}
	if err != nil {
		return err
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		if warmup.Value(i) || status.Value(i)/100 != 2 || errText.IsValid(i) {
			continue
		}
		if output.IsValid(i) && output.Value(i) < 0 || prompt.IsValid(i) && prompt.Value(i) < 0 {
			continue // an impossible row (invariants.go): counted by the statistics pass
		}
		byLevel := p.levels[runID.Value(i)]
		if byLevel == nil {
			byLevel = map[int32]*workloadAcc{}
			p.levels[runID.Value(i)] = byLevel
		}
		a := byLevel[level.Value(i)]
		if a == nil {
			a = &workloadAcc{turns: map[int]*turnAcc{}}
			byLevel[level.Value(i)] = a
		}
		if t := target.Value(i); t > 0 {
			a.target.add(int64(t))
		}
		if m := maxTok.Value(i); m > 0 {
			a.maxTok.add(int64(m))
		}
		if output.IsValid(i) {
			a.output.add(int64(output.Value(i)))
		}
		if !prompt.IsValid(i) {
			continue
		}
		pt := float64(prompt.Value(i))
		a.prompt.add(int64(prompt.Value(i)))
		hit := cached.IsValid(i)
		if hit {
			a.cachedN++
			a.cached += float64(cached.Value(i))
			a.cachedPrompt += pt
		}
		if turn == nil || !turn.IsValid(i) {
			continue
		}
		k := int(turn.Value(i))
		ta := a.turns[k]
		if ta == nil {
			ta = &turnAcc{ttft: spillCol[int64]{dir: p.spill}}
			a.turns[k] = ta
		}
		ta.prompt.add(int64(prompt.Value(i)))
		if first.IsValid(i) {
			ta.ttft.add(first.Value(i) - sent.Value(i))
		}
		if hit {
			ta.cachedN++
			ta.cached += float64(cached.Value(i))
			ta.cachedPrompt += pt
		}
	}
	return nil
}

// level is the Workload of one run's level (nil when it had no successful request).
func (p *workloadPass) level(runID string, level int32) (*Workload, error) {
	a := p.levels[runID][level]
	if a == nil {
		return nil, nil
	}
	w := &Workload{TargetPrompt: a.target.summary(), Prompt: a.prompt.summary(),
		MaxTokens: a.maxTok.summary(), Output: a.output.summary(), CachedRequests: a.cachedN}
	if a.cachedN > 0 && a.cachedPrompt > 0 {
		w.PrefixHitShare = ptr(a.cached / a.cachedPrompt)
	}
	turns := make([]int, 0, len(a.turns))
	for k := range a.turns {
		turns = append(turns, k)
	}
	slices.Sort(turns)
	for _, k := range turns {
		ta := a.turns[k]
		ttft, err := ta.ttft.sorted()
		if err != nil {
			return nil, err
		}
		ts := TurnStats{Turn: k, Requests: ta.prompt.len(), PromptTokens: ta.prompt.summary(), TTFT: summarizeNs(ttft)}
		if ta.cachedN > 0 && ta.cachedPrompt > 0 {
			ts.PrefixHitShare = ptr(ta.cached / ta.cachedPrompt)
		}
		w.Turns = append(w.Turns, ts)
	}
	return w, nil
}

// attach sets each level's Workload.
func (p *workloadPass) attach(r *Run) error {
	for i := range r.Levels {
		w, err := p.level(r.RunID, int32(r.Levels[i].Level))
		if err != nil {
			return fmt.Errorf("level %d: %w", r.Levels[i].Level, err)
		}
		r.Levels[i].Workload = w
	}
	return nil
}
