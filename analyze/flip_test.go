package analyze

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ceiling-llm/ceiling/trace"
)

// flipTrace writes a small recorded-looking trace (3 levels, 12 requests each, 20
// chunks per request) with trace.WriteFile, so it carries the checksums.
func flipTrace(t *testing.T, path string) {
	t.Helper()
	info, rows := flipRows()
	if err := trace.WriteFile(path, info, rows); err != nil {
		t.Fatal(err)
	}
}

func flipRows() (trace.RunInfo, []trace.Row) {
	rng := rand.New(rand.NewPCG(7, 7))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	levels := []int{1, 2, 4}
	info := trace.RunInfo{Tool: "ceiling", Version: "test", RunID: "flip", Started: start,
		Target: trace.Target{BaseURL: "http://127.0.0.1:8000", Endpoint: "chat", Model: "m"},
		Plan:   trace.Plan{Mode: "closed", Concurrency: levels, RequestsPerLevel: 12, Seed: 1},
		Server: trace.ServerInfo{Kind: "vllm"}}
	var rows []trace.Row
	now := start.UnixNano()
	var id int64
	for li, c := range levels {
		lvStart := now
		free := make([]int64, c)
		for k := range free {
			free[k] = now
		}
		for i := range 12 {
			wk := i % c
			sent := free[wk]
			first := sent + int64(20e6*(1+0.2*rng.Float64())*float64(c))
			gaps := make([]int32, 19)
			end := first
			for k := range gaps {
				gaps[k] = int32(5000 * (1 + 0.5*rng.Float64()) * float64(c))
				end += int64(gaps[k]) * 1000
			}
			free[wk] = end + 100_000
			id++
			p, o := int32(100), int32(20)
			fin := "length"
			rows = append(rows, trace.Row{RunID: "flip", Level: int32(li), Concurrency: int32(c), RequestID: id, Worker: int32(wk),
				ScheduledNs: sent, SentNs: sent, FirstTokenNs: &first, FirstContentNs: &first, EndNs: end, ChunkGapsUs: gaps,
				PromptTokens: &p, OutputTokens: &o, TokensSource: "usage", TargetPromptTokens: 100, MaxTokens: 20, Status: 200, FinishReason: &fin})
		}
		for _, f := range free {
			now = max(now, f)
		}
		info.Levels = append(info.Levels, trace.LevelInfo{Level: li, Concurrency: c, Requests: 12,
			Started: time.Unix(0, lvStart).UTC(), Ended: time.Unix(0, now).UTC()})
	}
	return info, rows
}

// analyzeJSON is the JSON analysis of path, or the error that refused it.
func analyzeJSON(path string) ([]byte, error) {
	a, err := Analyze(context.Background(), []string{path}, Options{})
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(a, "", "  ")
}

// Issue 18 items 8 and 20: the bit-flip experiment. A trace is damaged by one
// flipped bit at a time, at seeded positions: anywhere in the file, in the Parquet
// footer, in the ceiling.run metadata (inside the footer) and in the footer's
// length and magic. Each damaged file is analyzed: it may be refused (an error
// naming the file, never a panic) or give exactly the numbers of the intact file;
// it must never be accepted with different numbers. Every output is valid UTF-8.
func TestBitFlipsNeverChangeTheNumbers(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.parquet")
	flipTrace(t, clean)
	orig, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run.parquet")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := analyzeJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := analyzeJSON(path); !bytes.Equal(again, want) {
		t.Fatal("the analysis of the intact file is not deterministic: the test cannot compare")
	}
	n := len(orig)
	footerLen := int(binary.LittleEndian.Uint32(orig[n-8 : n-4]))
	footer := [2]int{n - 8 - footerLen, n - 8}
	runAt := bytes.Index(orig, []byte(`{"tool":"ceiling"`))
	if runAt < footer[0] {
		t.Fatalf("the ceiling.run metadata is not in the footer (at %d, footer from %d)", runAt, footer[0])
	}
	runEnd := runAt + bytes.Index(orig[runAt:], []byte(`"levels"`)) + 200
	targets := []struct {
		name   string
		lo, hi int
		flips  int
	}{
		{"anywhere", 0, n, 60},
		{"footer", footer[0], footer[1], 40},
		{"ceiling.run metadata", runAt, runEnd, 30},
		{"footer length and magic", n - 8, n, 8},
	}
	rng := rand.New(rand.NewPCG(18, 2026))
	var refused, same, different int
	for _, tg := range targets {
		for range tg.flips {
			at := tg.lo + rng.IntN(tg.hi-tg.lo)
			bit := byte(1) << rng.IntN(8)
			b := bytes.Clone(orig)
			b[at] ^= bit
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := analyzeJSON(path)
			switch {
			case err != nil:
				refused++
				if !bytes.Contains([]byte(err.Error()), []byte(path)) {
					t.Errorf("flip of bit %#x at byte %d (%s): the error does not name the file: %v", bit, at, tg.name, err)
				}
				if !utf8.ValidString(err.Error()) {
					t.Errorf("flip at byte %d: the error is not valid UTF-8", at)
				}
			case bytes.Equal(got, want):
				same++
			default:
				different++
				t.Errorf("flip of bit %#x at byte %d (%s) was accepted with different numbers", bit, at, tg.name)
			}
			if got != nil && !utf8.Valid(got) {
				t.Errorf("flip at byte %d (%s): the output is not valid UTF-8", at, tg.name)
			}
		}
	}
	t.Logf("%d flips of a %d-byte trace: %d refused, %d accepted with the same numbers, %d accepted with different numbers",
		refused+same+different, n, refused, same, different)
	if refused+same+different < 100 {
		t.Errorf("only %d flips", refused+same+different)
	}
}

// A corrupted file is refused with ErrCorrupt, naming it.
func TestCorruptTraceRefusedNamingIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.parquet")
	flipTrace(t, path)
	b, _ := os.ReadFile(path)
	// The first page of data lies right after the 4-byte magic: damage a byte in it.
	b[200] ^= 0x10
	os.WriteFile(path, b, 0o644)
	_, err := analyzeJSON(path)
	if err == nil || !errors.Is(err, trace.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(path)) {
		t.Errorf("error %v, want ErrCorrupt naming %s", err, path)
	}
}

// Item 8, salvage: a RUN.parts directory with one corrupt part is refused naming
// the part; with IgnoreCorrupt (analyze --ignore-corrupt) the intact parts are
// analyzed and a warning names the part left out. Both a damaged page and a
// damaged footer are tried.
func TestIgnoreCorruptSalvagesIntactParts(t *testing.T) {
	for _, where := range []string{"data", "footer"} {
		t.Run(where, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run.parquet.parts")
			ps, err := trace.CreateParts(dir)
			if err != nil {
				t.Fatal(err)
			}
			info, rows := flipRows()
			all := info.Levels
			for l := range 3 {
				info.Levels = all[:l+1]
				if err := ps.SealRows(l, rows[l*12:(l+1)*12], info); err != nil {
					t.Fatal(err)
				}
			}
			parts, _ := filepath.Glob(filepath.Join(dir, "*-rows-L0001.parquet"))
			if len(parts) != 1 {
				t.Fatalf("parts %v", parts)
			}
			b, _ := os.ReadFile(parts[0])
			at := 200
			if where == "footer" {
				at = len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:len(b)-4])) + 3
			}
			b[at] ^= 0x04
			os.WriteFile(parts[0], b, 0o644)
			if _, err := Analyze(context.Background(), []string{dir}, Options{}); err == nil || !errors.Is(err, trace.ErrCorrupt) || !strings.Contains(err.Error(), parts[0]) {
				t.Fatalf("a corrupt part: %v, want ErrCorrupt naming %s", err, parts[0])
			}
			a, err := Analyze(context.Background(), []string{dir}, Options{IgnoreCorrupt: true})
			if err != nil {
				t.Fatalf("--ignore-corrupt: %v", err)
			}
			r := a.Runs[0]
			var conc []int
			for _, l := range r.Levels {
				conc = append(conc, l.Concurrency)
			}
			if len(conc) != 2 || conc[0] != 1 || conc[1] != 4 {
				t.Errorf("levels at concurrency %v, want the intact 1 and 4", conc)
			}
			if !strings.Contains(strings.Join(r.Warnings, "\n"), parts[0]) {
				t.Errorf("no warning names the part left out: %q", r.Warnings)
			}
		})
	}
}
